import type { IncomingMessage } from 'node:http';

/**
 * The client closed its connection before its request body was all sent: its
 * own doing, not the daemon's fault, and there is nobody left to answer.
 */
export class BodyAbortedError extends Error {
  constructor() {
    super('the client aborted the request body upload');
    this.name = 'BodyAbortedError';
  }
}

/**
 * Reads a POST body up to `max` bytes; `null` when it is longer (the rest is discarded, not buffered).
 * Rejects with BodyAbortedError when the client drops the connection part way through.
 */
export async function readBody(req: IncomingMessage, max: number): Promise<Buffer | null> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) {
    req.resume();
    return null;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) {
        req.resume();
        return null;
      }
      chunks.push(chunk);
    }
  } catch (err) {
    // Node's http server fails the request stream with `Error: aborted` (ECONNRESET) when its socket closes first.
    if (req.readableAborted || (err as NodeJS.ErrnoException).code === 'ECONNRESET') throw new BodyAbortedError();
    throw err;
  }
  return Buffer.concat(chunks);
}
