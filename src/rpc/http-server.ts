import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Daemon } from '../daemon/daemon.js';
import { serveInspectorFile } from './inspector-files.js';
import { requestTarget } from './request-target.js';

/**
 * The HTTP side of `serve --ws`: the inspector's static files at `/`, the
 * AG-UI event stream per thread, and the `/rpc` upgrade (attached by the
 * WebSocket transport). Everything else is 404.
 */
export function createHttpServer(daemon: Daemon, routes: Array<(req: IncomingMessage, res: ServerResponse) => boolean> = []): Server {
  return createServer((req, res) => {
    try {
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
      daemon.log.log('error', 'http handler failed', { err });
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'internal error' }));
    }
  });
}
