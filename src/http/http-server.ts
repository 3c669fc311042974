import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ServeContext } from '../rpc/serve-context.js';
import type { Logger } from '../runtime/logger.js';
import { serveInspectorFile } from './inspector-files.js';
import { requestTarget } from '../rpc/request-target.js';
import { offersWebSocket } from '../rpc/websocket-offer.js';

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
  /** The request each connection is answering now (see the half-open comment below). */
  const answering = new WeakMap<Socket, IncomingMessage>();
  const server = createServer(options, (req, res) => {
    answering.set(req.socket, req);
    res.once('close', () => {
      if (answering.get(req.socket) === req) answering.delete(req.socket);
    });
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
  // A client may half-close once its request is sent (FIN after the body) and still read the answer. By default
  // (`httpAllowHalfOpen` false) Node's HTTP server answers that FIN by ending its own side of the socket
  // (`socketOnEnd` in lib/_http_server.js); the socket then closes and the request still being served is
  // destroyed ("aborted"), so an answer not yet written — `/mcp` authenticates before it reads the body — was
  // never sent. Allowed half-open, Node marks the response in flight as the connection's last instead: it is
  // answered, then the socket ends. The property is Node's own (set by http.Server, not in its typings).
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // But a FIN is also how a client that went away closes: a GET or HEAD in flight may be an endless event stream
  // (AG-UI, /mcp's standalone SSE) holding a per-user slot, so for those the FIN still ends the connection at
  // once, as before. Only a request with a body (a POST to /mcp or the approval route), received whole, is
  // answered after its client's FIN.
  server.on('connection', (socket: Socket) => {
    socket.on('end', () => {
      const req = answering.get(socket);
      if (req && (req.method === 'GET' || req.method === 'HEAD')) socket.destroy();
    });
  });
  return server;
}

/** 403: a JSON-RPC error body on `/mcp` (as MCP clients read one), `{error}` elsewhere. */
function forbidden(req: IncomingMessage, res: ServerResponse, reason: string): void {
  const mcp = requestTarget(req.url)?.pathname === '/mcp';
  const body = mcp ? { jsonrpc: '2.0', error: { code: -32000, message: reason }, id: null } : { error: reason };
  req.resume();
  res.writeHead(403, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify(body));
}
