import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { ServeContext } from '../rpc/serve-context.js';
import type { Logger } from '../runtime/logger.js';
import { serveInspectorFile } from './inspector-files.js';
import { requestTarget } from '../rpc/request-target.js';
import { offersWebSocket } from '../rpc/websocket-offer.js';

/**
 * How long an idle keep-alive connection stays open. Longer than a load balancer keeps its pooled connections
 * to a daemon idle (nginx's upstream `keepalive_timeout` is 60 s by default), so the balancer closes an idle
 * one, not the daemon: a daemon that closes it just as the balancer sends the next request on it drops that
 * request, and the balancer may not send a POST again (docs/operations.md). Node's default is 5 s; behind
 * HAProxy an MCP client then saw "other side closed" now and then (the load-balancer suite, 2 runs in 40).
 * Node says so in each response (`Keep-Alive: timeout=65`); `headersTimeout` (60 s by default) is set just above it.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * The HTTP side of `serve --ws`: the inspector's static files at `/`, the
 * AG-UI event stream per thread, and the `/rpc` upgrade (attached by the
 * WebSocket transport). Every request passes the Host/Origin guard first
 * (403 otherwise, whatever its path); everything unrouted is 404.
 */
export function createHttpServer(ctx: ServeContext<{ log: Logger }>, routes: Array<(req: IncomingMessage, res: ServerResponse) => boolean> = []): Server {
  const { services, guard } = ctx;
  // Only a WebSocket offer is an upgrade here: any other (`h2c`, which `curl --http2` offers on every request)
  // is served as the plain request it also is (RFC 9110 §7.8). Node 24.9+ reads this option; before it, the
  // WebSocket transport hands such a request back (ws-transport.ts, serveAsPlainRequest).
  const options = { shouldUpgradeCallback: offersWebSocket } as ServerOptions;
  const server = createServer(options, (req, res) => {
    try {
      const refused = guard(req);
      if (refused) {
        forbidden(req, res, refused);
        return;
      }
      const target = requestTarget(req.url);
      if (!target) {
        res.writeHead(400, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ error: 'bad request target' }));
        return;
      }
      for (const route of routes) if (route(req, res)) return;
      if (req.method === 'GET' || req.method === 'HEAD') {
        if (serveInspectorFile(target.pathname, req, res)) return;
      }
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found' }));
    } catch (err) {
      services.log.log('error', 'http handler failed', { err });
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'internal error' }));
    }
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  return server;
}

/** 403: a JSON-RPC error body on `/mcp` (as MCP clients read one), `{error}` elsewhere. */
function forbidden(req: IncomingMessage, res: ServerResponse, reason: string): void {
  const mcp = requestTarget(req.url)?.pathname === '/mcp';
  const body = mcp ? { jsonrpc: '2.0', error: { code: -32000, message: reason }, id: null } : { error: reason };
  req.resume();
  res.writeHead(403, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify(body));
}
