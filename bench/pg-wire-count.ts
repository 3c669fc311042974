/**
 * A counting TCP proxy in front of PostgreSQL, for the bench's "round trips per
 * call": it forwards bytes unchanged and counts the client's Sync ('S') and
 * simple Query ('Q') messages — each is one wait for the server's
 * ReadyForQuery, i.e. one round trip. Only the message headers are read.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface WireCounter {
  /** The given URL with its host and port replaced by the proxy's. */
  url: string;
  /** Round trips (Sync + Query messages) seen so far, all connections. */
  roundTrips(): number;
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;

/** Counts one client→server stream: untyped start-up messages first, then typed ones. */
function counter(onRoundTrip: () => void): (chunk: Buffer) => void {
  let buf = Buffer.alloc(0);
  let started = false;
  return (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      if (!started) {
        if (buf.length < 8) return;
        const len = buf.readInt32BE(0);
        if (buf.length < len) return;
        const code = buf.readInt32BE(4);
        // SSL/GSS requests are answered by one byte and followed by the real start-up message.
        if (code !== SSL_REQUEST && code !== GSS_REQUEST) started = true;
        buf = buf.subarray(len);
        continue;
      }
      if (buf.length < 5) return;
      const len = buf.readInt32BE(1) + 1;
      if (buf.length < len) return;
      const type = String.fromCharCode(buf[0]!);
      if (type === 'S' || type === 'Q') onRoundTrip();
      buf = buf.subarray(len);
    }
  };
}

export async function startWireCounter(url: string): Promise<WireCounter> {
  const target = new URL(url);
  const host = target.hostname;
  const port = Number(target.port || 5432);
  let trips = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(port, host);
    sockets.add(client).add(upstream);
    const count = counter(() => trips++);
    client.on('data', (c: Buffer) => {
      count(c);
      upstream.write(c);
    });
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const via = new URL(url);
  via.hostname = '127.0.0.1';
  via.port = String((server.address() as { port: number }).port);
  return {
    url: via.toString(),
    roundTrips: () => trips,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
