/**
 * A TCP proxy between a daemon and a PostgreSQL server that counts the
 * daemon's round trips from outside: every frontend message of type Sync
 * ('S', the end of one extended-protocol query) or simple Query ('Q') makes
 * the client wait for the server's ReadyForQuery once — one round trip.
 *
 * The client's bytes are parsed only to find message boundaries (a
 * protocol-3 stream: first untyped messages — SSLRequest, GSSENCRequest,
 * the StartupMessage — each `int32 length` first; then `byte type, int32
 * length` frames) and are forwarded unchanged; the server's bytes are not
 * looked at. Counting stays off until `reset()`, so a test counts exactly the
 * window it names.
 *
 * `ignore`: statements that are not the call's own waits — the fan-out's
 * NOTIFY, which the daemon sends on a connection of its own after the
 * call's commit (src/store/pg/notifier.ts) — are not counted. A round trip's
 * statement is known from the Parse ('P') or Bind ('B', naming a statement
 * parsed earlier) before its Sync, or from the Query's own text.
 */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

/** The protocol codes of the untyped requests that precede the StartupMessage. */
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

export interface PgWireProxy {
  /** `serverUrl` with host and port replaced by the proxy's. */
  url: string;
  /** Round trips (Sync + Query messages) since the last `reset()`. */
  roundTrips(): number;
  /** Round trips of ignored statements since the last `reset()`. */
  ignored(): number;
  /** The statements of those round trips, in order (each Sync's, each Query's text). */
  statements(): string[];
  /** Starts a new count window at zero. */
  reset(): void;
  stop(): Promise<void>;
}

/** Splits one client's byte stream into messages and reports each frontend message type. */
class FrontendParser {
  private buffered: Buffer = Buffer.alloc(0);
  private started = false;

  constructor(private readonly onMessage: (type: string, body: Buffer) => void) {}

  push(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    for (;;) {
      if (!this.started) {
        if (this.buffered.length < 8) return;
        const length = this.buffered.readInt32BE(0);
        if (this.buffered.length < length) return;
        const code = this.buffered.readInt32BE(4);
        // An SSL/GSS request is answered with one byte, then the StartupMessage follows (also untyped).
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) this.started = true;
        this.buffered = this.buffered.subarray(length);
        continue;
      }
      if (this.buffered.length < 5) return;
      const length = this.buffered.readInt32BE(1);
      if (this.buffered.length < 1 + length) return;
      this.onMessage(String.fromCharCode(this.buffered[0]!), this.buffered.subarray(5, 1 + length));
      this.buffered = this.buffered.subarray(1 + length);
    }
  }
}

/** The NUL-terminated strings at the start of a message body (Parse: name, text; Bind: portal, statement). */
function cstrings(body: Buffer, n: number): string[] {
  const out: string[] = [];
  let at = 0;
  while (out.length < n) {
    const end = body.indexOf(0, at);
    if (end < 0) break;
    out.push(body.toString('utf8', at, end));
    at = end + 1;
  }
  return out;
}

export async function startPgWireProxy(serverUrl: string, opts: { ignore?: (text: string) => boolean } = {}): Promise<PgWireProxy> {
  const target = new URL(serverUrl);
  const sockets = new Set<Socket>();
  let counting = false;
  let count = 0;
  let texts: string[] = [];
  let ignoredCount = 0;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client);
    sockets.add(upstream);
    // This connection's prepared statements (name → text), and the text the next Sync ends.
    const prepared = new Map<string, string>();
    let current = '';
    const counts = (text: string) => {
      if (!counting) return false;
      if (opts.ignore?.(text)) {
        ignoredCount++;
        return false;
      }
      texts.push(text);
      return true;
    };
    const parser = new FrontendParser((type, body) => {
      if (type === 'P') {
        const [name = '', text = ''] = cstrings(body, 2);
        prepared.set(name, text);
        current = text;
      } else if (type === 'B') {
        current = prepared.get(cstrings(body, 2)[1] ?? '') ?? '';
      } else if (type === 'S') {
        if (counts(current)) count++;
      } else if (type === 'Q') {
        if (counts(cstrings(body, 1)[0] ?? '')) count++;
      }
    });
    client.on('data', (chunk: Buffer) => {
      parser.push(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = new URL(serverUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    roundTrips: () => count,
    statements: () => [...texts],
    ignored: () => ignoredCount,
    reset: () => {
      counting = true;
      count = 0;
      ignoredCount = 0;
      texts = [];
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
