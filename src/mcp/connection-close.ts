/**
 * A request that says `Connection: close` gets its answer on a connection
 * that then closes. The MCP SDK sets `Connection: keep-alive` on every event
 * stream it answers a POST with, and Node lets a response's own `Connection`
 * header overrule the request's: such a client's socket stayed open until the
 * server's keep-alive timeout (5 s), a connection slot held for nothing. The
 * header is dropped from that response, and Node closes the connection after
 * it as the client asked.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** Whether the request's `Connection` header holds the `close` token. */
function asksToClose(req: IncomingMessage): boolean {
  return /(^|,)\s*close\s*(,|$)/i.test(req.headers.connection ?? '');
}

/** Makes `res` (nothing written yet) keep no `Connection` header of its own when `req` asked to close. */
export function honourConnectionClose(req: IncomingMessage, res: ServerResponse): void {
  if (!asksToClose(req)) return;
  const setHeader = res.setHeader.bind(res);
  res.setHeader = ((name: string, value: number | string | readonly string[]) => (name.toLowerCase() === 'connection' ? res : setHeader(name, value))) as ServerResponse['setHeader'];
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  res.writeHead = ((...args: unknown[]) => {
    const headers = args.at(-1);
    if (Array.isArray(headers)) {
      const kept: unknown[] = [];
      for (let i = 0; i + 1 < headers.length; i += 2) if (String(headers[i]).toLowerCase() !== 'connection') kept.push(headers[i], headers[i + 1]);
      args[args.length - 1] = kept;
    } else if (headers !== null && typeof headers === 'object') {
      args[args.length - 1] = Object.fromEntries(Object.entries(headers as OutgoingHttpHeaders).filter(([name]) => name.toLowerCase() !== 'connection'));
    }
    return writeHead(...args);
  }) as ServerResponse['writeHead'];
}
