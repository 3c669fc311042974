/**
 * The MCP Streamable HTTP endpoint (`/mcp` on the `--ws` server), loaded on
 * its first request. Importing the MCP SDK adds ~27 MB to the daemon's
 * resident set (measured: `npm run bench`, idle RSS; bench/RESULTS.md), which
 * a daemon that never serves MCP should not pay. Once loaded, requests go
 * straight to the real endpoint.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpHttpDeps, McpHttpOptions, McpHttpServer } from './mcp-http.js';
import type { ServeContext } from '../rpc/serve-context.js';
import { requestTarget } from '../rpc/request-target.js';

/** The same path as mcp-http.ts's MCP_PATH (a test keeps them equal): importing it would load the SDK. */
export const LAZY_MCP_PATH = '/mcp';

export function lazyMcpHttp(ctx: ServeContext<McpHttpDeps>, opts: McpHttpOptions = {}): McpHttpServer {
  const log = ctx.services.log;
  let server: McpHttpServer | undefined;
  let loading: Promise<McpHttpServer> | undefined;
  const load = () => (loading ??= import('./mcp-http.js').then((m) => (server = m.createMcpHttp(ctx, opts))));
  return {
    route(req: IncomingMessage, res: ServerResponse): boolean {
      if (server) return server.route(req, res);
      if (requestTarget(req.url)?.pathname !== LAZY_MCP_PATH) return false;
      // The body waits, unread, in the request stream until the endpoint reads it.
      load().then(
        (s) => {
          if (!s.route(req, res)) res.writeHead(404).end();
        },
        (err: unknown) => {
          log.log('error', 'mcp http endpoint failed to load', { err: (err as Error).message });
          res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'internal error' }));
        },
      );
      return true;
    },
    sessionCount: () => server?.sessionCount() ?? 0,
    async closeAll() {
      if (loading) await (await loading).closeAll();
    },
  };
}
