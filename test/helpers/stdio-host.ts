import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import { TOOLGATE_BIN, tempDir } from './repo.js';
import { TEST_BEARER_SECRET } from './tokens.js';

export interface WireEvent {
  kind: 'notification' | 'response' | 'error';
  method?: string;
  payload: unknown;
}

/** A host talking to a real `toolgate serve --stdio` child over LSP framing. */
export interface StdioHost {
  proc: ChildProcessWithoutNullStreams;
  rpc: MessageConnection;
  dbPath: string;
  dataDir: string;
  /** Every notification and response, in arrival order. */
  wire: WireEvent[];
  stderr(): string;
  request<T = unknown>(method: string, params?: unknown): Promise<T>;
  /** Sends `shutdown` + `exit` and waits for the process; returns its exit code. */
  stop(): Promise<number | null>;
  exited: Promise<number | null>;
}

export interface StartOptions {
  args?: string[];
  env?: Record<string, string>;
  dataDir?: string;
}

export async function startStdioHost(opts: StartOptions = {}): Promise<StdioHost> {
  const dataDir = opts.dataDir ?? tempDir();
  const dbPath = join(dataDir, 'toolgate.db');
  const proc = spawn(process.execPath, [TOOLGATE_BIN, 'serve', '--stdio', '--db', dbPath, ...(opts.args ?? [])], {
    env: { PATH: process.env.PATH ?? '', TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  const rpc = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
  const wire: WireEvent[] = [];
  rpc.onNotification((method, params) => { wire.push({ kind: "notification", method, payload: params }); });
  rpc.onError(() => {});
  rpc.listen();
  const host: StdioHost = {
    proc,
    rpc,
    dbPath,
    dataDir,
    wire,
    exited,
    stderr: () => stderr,
    async request<T>(method: string, params?: unknown): Promise<T> {
      try {
        const result = (await rpc.sendRequest(method, params)) as T;
        wire.push({ kind: 'response', method, payload: result });
        return result;
      } catch (err) {
        wire.push({ kind: 'error', method, payload: err });
        throw err;
      }
    },
    async stop() {
      if (proc.exitCode === null) {
        try {
          await rpc.sendRequest('shutdown');
          await rpc.sendNotification('exit');
        } catch {
          /* already gone */
        }
      }
      const code = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
      rpc.dispose();
      return code;
    },
  };
  return host;
}

/** `initialize` then `session/open` with a bearer token; returns the session. */
export async function openSession(
  host: StdioHost,
  token: string,
  extra: Record<string, unknown> = {},
): Promise<{ session_id: string; user_id: string; enabled_skills: string[]; allowed_actions: string[] }> {
  if (!host.wire.some((e) => e.method === 'initialize')) {
    await host.request('initialize', { protocol_version: '1', client_info: { name: 'test-host', version: '0' } });
  }
  return host.request('session/open', { auth: { type: 'bearer', token }, ...extra });
}
