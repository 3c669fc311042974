/**
 * The two public transports, seen from a client: LSP framing over a child
 * process's stdin/stdout (vscode-jsonrpc's reader and writer do the framing)
 * and one JSON-RPC message per WebSocket text frame. Both deliver whole
 * messages as parsed JSON, in arrival order, so the runner can check order.
 */
import { spawn } from 'node:child_process';
import WebSocket from 'ws';
import { StreamMessageWriter, type Message } from 'vscode-jsonrpc/node';
import { DisposingStreamMessageReader } from '../protocol/stream-reader.js';

export interface RawTransport {
  /** What the runner is talking to, for the report. */
  readonly description: string;
  send(message: object): Promise<void>;
  /** Sends `body` as one message exactly as given (framed on stdio, one text frame on WebSocket): for malformed input. */
  sendRaw(body: string): Promise<void>;
  onMessage(listener: (message: unknown) => void): void;
  /** Called once when the peer is gone (process exit, socket closed). */
  onClose(listener: (reason: string) => void): void;
  /** A stdio child's exit code once it has exited; undefined while it runs or for WebSocket. */
  exitCode(): number | null | undefined;
  close(): Promise<void>;
}

/** One LSP frame holding `body` as is, in one write. */
function writeFramed(out: NodeJS.WritableStream, body: string): Promise<void> {
  const bytes = Buffer.from(body, 'utf8');
  return new Promise<void>((resolve, reject) => out.write(Buffer.concat([Buffer.from(`Content-Length: ${bytes.length}\r\n\r\n`, 'ascii'), bytes]), (err) => (err ? reject(err) : resolve())));
}

/** Starts `argv` (no shell) and speaks LSP-framed JSON-RPC on its stdin/stdout. */
export function stdioTransport(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): RawTransport {
  const [program, ...args] = argv;
  if (!program) throw new Error('empty command');
  const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'], env, shell: false });
  let stderr = '';
  // The kept text starts inside a line whose start was dropped: such a line is never reported, since a
  // token cut there (its header gone) would be shown without anything to tell a scan it is one.
  let midLine = false;
  child.stderr.on('data', (c: Buffer) => {
    // Kept only for the report when the process dies; logs are the implementation's business.
    stderr += c.toString('utf8');
    if (midLine) {
      const nl = stderr.indexOf('\n');
      midLine = nl < 0;
      stderr = midLine ? '' : stderr.slice(nl + 1);
    }
    if (stderr.length > 4000) {
      stderr = stderr.slice(-4000);
      const nl = stderr.indexOf('\n');
      midLine = nl < 0;
      stderr = midLine ? '' : stderr.slice(nl + 1);
    }
  });
  const reader = new DisposingStreamMessageReader(child.stdout);
  const writer = new StreamMessageWriter(child.stdin);
  const closeListeners: Array<(reason: string) => void> = [];
  let exit: number | null | undefined;
  let closed = false;
  const fireClose = (reason: string) => {
    if (closed) return;
    closed = true;
    for (const l of closeListeners) l(reason);
  };
  child.on('error', (err) => fireClose(`cannot start ${program}: ${err.message}`));
  child.on('exit', (code, signal) => {
    exit = code;
    // The implementation's own last word (a toolgate daemon says what to fix on its last stderr line).
    const last = stderr.trim().split('\n').at(-1)?.trim() ?? '';
    fireClose(`daemon exited ${signal ?? code}${last ? `: ${last}` : ''}`);
  });
  writer.onError(() => {});
  reader.onError(() => {});
  return {
    description: `stdio: ${argv.join(' ')}`,
    async send(message) {
      await writer.write(message as Message);
    },
    sendRaw: (body) => writeFramed(child.stdin, body),
    onMessage(listener) {
      reader.listen((m) => listener(m));
    },
    onClose(listener) {
      closeListeners.push(listener);
    },
    exitCode: () => exit,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin.end();
        const gone = new Promise<void>((r) => child.once('exit', () => r()));
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        timer.unref();
        await gone;
        clearTimeout(timer);
      }
      reader.dispose();
      writer.dispose();
    },
  };
}

/**
 * LSP-framed JSON-RPC over streams the caller owns (an in-memory duplex pair in
 * tests). `end()` on `output` is the goodbye; the peer ending `input` is a close.
 */
export function streamTransport(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, description: string): RawTransport {
  const reader = new DisposingStreamMessageReader(input);
  const writer = new StreamMessageWriter(output);
  const closeListeners: Array<(reason: string) => void> = [];
  let closed = false;
  const fireClose = (reason: string) => {
    if (closed) return;
    closed = true;
    for (const l of closeListeners) l(reason);
  };
  reader.onClose(() => fireClose('stream closed'));
  input.on('end', () => fireClose('stream ended'));
  reader.onError(() => {});
  writer.onError(() => {});
  return {
    description,
    async send(message) {
      await writer.write(message as Message);
    },
    sendRaw: (body) => writeFramed(output, body),
    onMessage(listener) {
      reader.listen((m) => listener(m));
    },
    onClose(listener) {
      closeListeners.push(listener);
    },
    exitCode: () => undefined,
    async close() {
      output.end();
      reader.dispose();
      writer.dispose();
    },
  };
}

/** Connects to a `/rpc` WebSocket endpoint: one JSON-RPC message per text frame. */
export async function wsTransport(url: string): Promise<RawTransport> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', (err) => reject(new Error(`cannot connect to ${url}: ${err.message}`)));
  });
  const closeListeners: Array<(reason: string) => void> = [];
  socket.on('close', (code) => closeListeners.forEach((l) => l(`socket closed (${code})`)));
  socket.on('error', () => {});
  return {
    description: `ws: ${url}`,
    async send(message) {
      await new Promise<void>((resolve, reject) => socket.send(JSON.stringify(message), (err) => (err ? reject(err) : resolve())));
    },
    async sendRaw(body) {
      await new Promise<void>((resolve, reject) => socket.send(body, (err) => (err ? reject(err) : resolve())));
    },
    onMessage(listener) {
      socket.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
        const text = isBinary ? null : data.toString();
        let parsed: unknown;
        try {
          parsed = text === null ? { binaryFrame: true } : JSON.parse(text);
        } catch {
          parsed = { unparsableFrame: text?.slice(0, 200) };
        }
        listener(parsed);
      });
    },
    onClose(listener) {
      closeListeners.push(listener);
    },
    exitCode: () => undefined,
    async close() {
      if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING) {
        const closed = new Promise((r) => socket.once('close', r));
        socket.close();
        const timer = setTimeout(() => socket.terminate(), 5000);
        timer.unref();
        await closed;
        clearTimeout(timer);
      }
    },
  };
}
