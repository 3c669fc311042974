/**
 * A thin guard in front of the MCP SDK's stdio transport (`serve --mcp`,
 * newline-delimited JSON-RPC): `limits.max_message_bytes` holds there as on
 * the daemon's own stdio (contract sections 8 and 13). The SDK buffers a line
 * up to 10 MB and, past it, closes the connection; this guard counts each
 * line's bytes as they stream instead:
 *
 * - a line is passed on whole, at its newline — held meanwhile, never more
 *   than the cap — so no part of a refused line ever reaches the SDK (a
 *   prefix could itself be valid JSON and run);
 * - a line over the cap is answered at once (through `onTooLarge`, a -32600
 *   with `id: null`), the rest of it is discarded as it streams, and the next
 *   line is read as usual. A `\r` before the newline is not counted: the SDK
 *   strips it;
 * - `admit` sees each whole line first (mcp-stdio.ts answers one that is not
 *   a JSON-RPC message, which the SDK would skip without a word).
 */
import { Transform, type TransformCallback } from 'node:stream';

const NEWLINE = 0x0a;
const CR = 0x0d;

export interface LineGuardOptions {
  maxMessageBytes: number;
  /** A line over the cap: answer -32600 (`id: null`). */
  onTooLarge: () => void;
  /** A whole line within the cap (its newline and a `\r` before it left out): false drops it. */
  admit?: (line: Buffer) => boolean;
}

export class McpLineGuard extends Transform {
  /** The current line's bytes so far (at most the cap, plus a `\r` that may end it). */
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** Inside a line over the cap: dropped up to its newline. */
  private discarding = false;

  constructor(private readonly opts: LineGuardOptions) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let at = 0;
    while (at < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, at);
      const part = chunk.subarray(at, nl < 0 ? chunk.length : nl);
      at = nl < 0 ? chunk.length : nl + 1;
      if (this.discarding) {
        if (nl >= 0) this.discarding = false;
        continue;
      }
      this.held.push(part);
      this.heldBytes += part.length;
      if (nl < 0) {
        // Over the cap even if the line's next byte were its newline after a `\r`: refuse now.
        if (this.heldBytes > this.opts.maxMessageBytes + (this.lastHeldByte() === CR ? 1 : 0)) this.refuse(true);
        continue;
      }
      const length = this.heldBytes - (this.lastHeldByte() === CR ? 1 : 0);
      if (length > this.opts.maxMessageBytes) {
        this.refuse(false);
        continue;
      }
      const line = Buffer.concat(this.held);
      this.held = [];
      this.heldBytes = 0;
      if (this.opts.admit && !this.opts.admit(line.subarray(0, length))) continue;
      this.push(Buffer.concat([line, Buffer.from('\n')]));
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    // A last line without its newline: as the SDK would, it is left unread.
    this.held = [];
    done();
  }

  private lastHeldByte(): number | undefined {
    for (let i = this.held.length - 1; i >= 0; i--) {
      const b = this.held[i]!;
      if (b.length > 0) return b[b.length - 1];
    }
    return undefined;
  }

  /** Drops the held line; `rest` says whether the line goes on past this chunk (discard up to its newline). */
  private refuse(rest: boolean): void {
    this.held = [];
    this.heldBytes = 0;
    this.discarding = rest;
    this.opts.onTooLarge();
  }
}
