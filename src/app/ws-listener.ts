/**
 * `serve --ws`'s network side: one HTTP server holding every route the
 * daemon serves beside `/rpc` (probes and metrics, AG-UI streams, OAuth
 * resource metadata, MCP over Streamable HTTP with its CORS), the WebSocket
 * JSON-RPC transport on its upgrades, listening on `host:port`. `serve`
 * runs it for the binary; the in-process test helper runs the very same
 * one, so a suite that speaks to it over the loopback sees the binary's
 * HTTP surface, not a copy.
 */
import type { ServeContext } from '../rpc/serve-context.js';
import type { Logger } from '../runtime/logger.js';
import type { Services } from '../rpc/services.js';
import { createHttpServer } from '../http/http-server.js';
import { agUiStreamRoute } from '../http/ag-ui-stream.js';
import { callRoutes } from '../http/call-routes.js';
import { corsRoute } from '../http/cors.js';
import { resourceMetadataRoute } from '../http/oauth-metadata.js';
import { attachWebSocketRpc } from '../rpc/ws-transport.js';
import { LAZY_MCP_PATH, lazyMcpHttp } from '../mcp/mcp-http-lazy.js';
import { RESOURCE_METADATA_PATH, RESOURCE_METADATA_ROOT_PATH } from '../auth/protected-resource.js';
import { attachMetrics, daemonOpsRoutes } from './observability.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export interface WsListener {
  host: string;
  port: number;
  /** Ends MCP sessions, closes the server and every WebSocket (a second call is harmless). */
  close(): Promise<void>;
}

export async function listenWs(ctx: ServeContext<Services>, opts: { host?: string; port?: number }, log: Logger): Promise<WsListener> {
  const { services } = ctx;
  const host = opts.host ?? '127.0.0.1';
  const mcpHttp = lazyMcpHttp(ctx);
  await attachMetrics(services, host);
  const cors = corsRoute([LAZY_MCP_PATH, RESOURCE_METADATA_PATH, RESOURCE_METADATA_ROOT_PATH]);
  const routes = [cors, daemonOpsRoutes(services, ctx.accepting), agUiStreamRoute(ctx), callRoutes(ctx), resourceMetadataRoute(services), mcpHttp.route];
  const http = createHttpServer(ctx, routes);
  const ws = attachWebSocketRpc(ctx, http);
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port ?? 0, host, () => resolve());
  });
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : (opts.port ?? 0);
  if (!LOOPBACK.has(host)) log.log('warn', 'listening beyond loopback: put TLS and a firewall in front of this port', { host });
  if (services.oauth) {
    services.oauth.listening(host, port);
    if (!services.config.http.publicUrl && !LOOPBACK.has(host)) {
      log.log('warn', 'auth.issuer is set without http.public_url: clients are told this server is at its socket address', { public_url: `http://${host}:${port}` });
    }
  }
  let closed: Promise<void> | undefined;
  return {
    host,
    port,
    close() {
      closed ??= (async () => {
        // MCP sessions hold SSE streams open: end them first so the server can close.
        await mcpHttp.closeAll();
        await new Promise<void>((resolve) => {
          http.close(() => resolve());
          http.closeIdleConnections();
          setTimeout(resolve, 1000).unref();
        });
        ws.closeAll();
        http.closeAllConnections();
      })();
      return closed;
    },
  };
}
