import type { IncomingMessage } from 'node:http';

/** Whether a request's `Upgrade` offers a WebSocket: the only protocol the `--ws` port upgrades to. */
export function offersWebSocket(req: IncomingMessage): boolean {
  return String(req.headers.upgrade ?? '').split(',').some((p) => p.trim().toLowerCase() === 'websocket');
}
