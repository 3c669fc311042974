/**
 * A thin guard in front of vscode-jsonrpc's StreamMessageReader on stdio
 * (contract section 13). It parses only the LSP header block of each frame
 * to enforce the size cap and to fail loudly; bodies pass through untouched
 * (vscode-jsonrpc does the framing and the JSON):
 *
 * - a declared `Content-Length` over the cap is answered at once (through
 *   `onTooLarge`) and its body is discarded as it streams — never buffered;
 * - a header block that cannot be parsed — no `Content-Length`, a
 *   non-numeric, negative or conflicting one, a line without `:`, a bare CR
 *   or LF or a byte outside ASCII (which vscode-jsonrpc's reader would read
 *   otherwise), no terminator within MAX_HEADER_BYTES, or stdin ending
 *   inside a frame — is
 *   reported through `onFatal` and nothing more is read: the stream cannot be
 *   resynchronised, and a daemon that goes silent is worse than one that exits;
 * - a JSON text (`{` or `[`) where a header block should start — a host
 *   writing newline-delimited JSON, which never sends the `\r\n\r\n` a
 *   header block waits for — is reported at its first byte through
 *   `onJsonLine`, and nothing more is read.
 */
import { Transform, type TransformCallback } from 'node:stream';

/** Longer than any honest header block (`Content-Length` plus `Content-Type`). */
const MAX_HEADER_BYTES = 8 * 1024;
const TERMINATOR = Buffer.from('\r\n\r\n');
/** Header names are RFC 7230 tokens. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export interface FrameGuardOptions {
  maxMessageBytes: number;
  /** A frame over the cap: answer -32600 (`id: null`). */
  onTooLarge: (declared: number) => void;
  /** The stream cannot be read on: log and end the daemon with a non-zero exit. */
  onFatal: (reason: string) => void;
  /** JSON where a header block should start (newline-delimited JSON, not LSP framing): answer once and end. */
  onJsonLine: () => void;
}

export class StdioFrameGuard extends Transform {
  private header = Buffer.alloc(0);
  /** Body bytes still to pass through (or to discard, when `discarding`). */
  private remaining = 0;
  private discarding = false;
  private failed = false;

  constructor(private readonly opts: FrameGuardOptions) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let at = 0;
    // Bytes of this chunk that pass through, pushed as one slice: every whole frame a read brought
    // reaches vscode-jsonrpc's reader in one piece (a header pushed apart from its body armed the
    // reader's partial-message timer, only to clear it at the body).
    let run = -1;
    const pushRun = (end: number) => {
      if (run >= 0 && end > run) this.push(chunk.subarray(run, end));
      run = -1;
    };
    while (at < chunk.length && !this.failed) {
      if (this.remaining > 0) {
        const n = Math.min(this.remaining, chunk.length - at);
        if (this.discarding) pushRun(at);
        else if (run < 0) run = at;
        this.remaining -= n;
        at += n;
        if (this.remaining === 0) this.discarding = false;
        continue;
      }
      // In a header block: look for its terminator, across chunk boundaries.
      const start = at;
      const before = this.header.length;
      const joined = before === 0 ? chunk.subarray(at) : Buffer.concat([this.header, chunk.subarray(at)]);
      const first = firstNonBlank(joined);
      if (first === 0x7b || first === 0x5b) {
        // `{` or `[`: a header block starts with a header name, never with JSON.
        pushRun(start);
        this.failed = true;
        this.opts.onJsonLine();
        return done();
      }
      const end = joined.indexOf(TERMINATOR, Math.max(0, before - 3));
      if (end < 0) {
        pushRun(start);
        // Lines ended by a bare LF (`\n\n` never becomes `\r\n\r\n`): refused at once, not after 8 KiB a host
        // waiting for its answer never sends.
        const broken = headerBytesProblem(joined, false);
        if (broken) return this.fail(broken, done);
        if (joined.length > MAX_HEADER_BYTES) return this.fail('no header terminator (\\r\\n\\r\\n) within 8 KiB', done);
        this.header = Buffer.from(joined);
        at = chunk.length;
        continue;
      }
      const block = joined.subarray(0, end);
      at += end + TERMINATOR.length - before;
      this.header = Buffer.alloc(0);
      if (block.length > MAX_HEADER_BYTES) return this.failAfter(pushRun, start, 'header block longer than 8 KiB', done);
      const broken = headerBytesProblem(block, true);
      if (broken) return this.failAfter(pushRun, start, broken, done);
      const parsed = parseHeaderBlock(block.toString('latin1'));
      if (typeof parsed === 'string') return this.failAfter(pushRun, start, parsed, done);
      if (parsed > this.opts.maxMessageBytes) {
        pushRun(start);
        this.opts.onTooLarge(parsed);
        this.discarding = true;
      } else if (before === 0) {
        // The whole header block is in this chunk: it joins the run.
        if (run < 0) run = start;
      } else {
        // Begun in an earlier chunk: its bytes are not all here (nothing of this chunk ran before it).
        this.push(Buffer.concat([block, TERMINATOR]));
      }
      this.remaining = parsed;
    }
    pushRun(at);
    done();
  }

  override _flush(done: TransformCallback): void {
    if (!this.failed && (this.remaining > 0 || this.header.length > 0)) {
      this.failed = true;
      this.opts.onFatal(this.remaining > 0 ? `stdin ended ${this.remaining} bytes short of the declared Content-Length` : 'stdin ended inside a header block');
    }
    done();
  }

  /** Fails at the header block that starts at `start`: the whole frames before it still pass. */
  private failAfter(pushRun: (end: number) => void, start: number, reason: string, done: TransformCallback): void {
    pushRun(start);
    this.fail(reason, done);
  }

  private fail(reason: string, done: TransformCallback): void {
    this.failed = true;
    this.opts.onFatal(reason);
    done();
  }
}

/** The first byte that is not a space, tab, CR or LF (-1 when there is none yet). */
function firstNonBlank(bytes: Buffer): number {
  for (const b of bytes) if (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== 0x0a) return b;
  return -1;
}

/**
 * Why header bytes cannot be what vscode-jsonrpc's reader reads too, or undefined. Its reader ends a line only
 * at CR LF and decodes the block as ASCII (the high bit dropped: 0x8D 0x8A would become CR LF there), so a
 * bare CR or LF, or a byte over 0x7F, would make it read other headers — another Content-Length — than the
 * ones checked here, and the stream would go silent. `complete`: the bytes end where the block does (a CR at
 * the end of a block still being read may yet be followed by its LF).
 */
function headerBytesProblem(bytes: Buffer, complete: boolean): string | undefined {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b > 0x7f) return 'a header byte outside ASCII';
    if (b === 0x0a && (i === 0 || bytes[i - 1] !== 0x0d)) return 'a header line ended by a bare LF (\\n), not CRLF';
    if (b === 0x0d && (i + 1 < bytes.length ? bytes[i + 1] !== 0x0a : complete)) return 'a bare CR (\\r) in the header block';
  }
  return undefined;
}

/** The declared body length, or why the header block cannot be parsed. */
function parseHeaderBlock(block: string): number | string {
  let length: number | undefined;
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) return 'a header line without "name: value"';
    const name = line.slice(0, colon);
    if (!HEADER_NAME.test(name)) return 'a header name that is not a token';
    if (name.toLowerCase() !== 'content-length') continue;
    const value = line.slice(colon + 1).trim();
    // Digits only (no sign, no exponent); more than 15 digits is no honest length.
    if (!/^\d{1,15}$/.test(value)) return 'Content-Length is not a non-negative integer';
    const n = Number(value);
    if (length !== undefined && length !== n) return 'conflicting Content-Length headers';
    length = n;
  }
  if (length === undefined) return 'no Content-Length header';
  return length;
}
