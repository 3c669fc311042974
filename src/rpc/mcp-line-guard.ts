/**
 * A thin guard in front of the MCP SDK's stdio transport (`serve --mcp`,
 * newline-delimited JSON-RPC): `limits.max_message_bytes` holds there as on
 * the daemon's own stdio (contract sections 8 and 13). The SDK buffers a line
 * up to 10 MB and, past it, closes the connection; this guard counts each
 * line's bytes as they stream instead:
 *
 * - a line over the cap is answered at once (through `onTooLarge`, a -32600
 *   with `id: null`), the rest of it is discarded as it streams — never
 *   buffered — and the next line is read as usual;
 * - every other byte passes through untouched: the SDK does the framing and
 *   the JSON.
 */
import { Transform, type TransformCallback } from 'node:stream';

const NEWLINE = 0x0a;

export interface LineGuardOptions {
  maxMessageBytes: number;
  /** A line over the cap: answer -32600 (`id: null`). */
  onTooLarge: () => void;
}

export class McpLineGuard extends Transform {
  /** Bytes of the current line passed on so far. */
  private lineBytes = 0;
  /** Inside a line over the cap: dropped up to its newline. */
  private discarding = false;

  constructor(private readonly opts: LineGuardOptions) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let at = 0;
    while (at < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, at);
      const end = nl < 0 ? chunk.length : nl + 1;
      // The line's own bytes, without its newline (the cap is on the message).
      const bytes = (nl < 0 ? chunk.length : nl) - at;
      if (!this.discarding && this.lineBytes + bytes > this.opts.maxMessageBytes) {
        this.discarding = true;
        // What of the line already went on is ended here, so the SDK drops it as a line it cannot parse.
        if (this.lineBytes > 0) this.push(Buffer.from('\n'));
        this.opts.onTooLarge();
      }
      if (!this.discarding) this.push(chunk.subarray(at, end));
      if (nl < 0) {
        this.lineBytes += bytes;
      } else {
        this.lineBytes = 0;
        this.discarding = false;
      }
      at = end;
    }
    done();
  }
}
