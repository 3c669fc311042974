/**
 * A host as an integrator would write one: spawns the real daemon and speaks
 * JSON-RPC to it over stdio (LSP framing) or WebSocket (/rpc), through the
 * package's own typed client (`toolgate/client`, src/client), so every e2e
 * suite built on this helper exercises that client too. Tests take a
 * Transport and run the same cases over both.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { ResponseError, type MessageConnection } from 'vscode-jsonrpc/node';
import { ToolgateClient } from '../../src/client/index.js';
import { TOOLGATE_BIN, tempDir } from './repo.js';
import { assertResultShape, assertWireShape, RESULT_SHAPE } from './wire-validator.js';
import { TEST_BEARER_SECRET } from './tokens.js';
import { pgDatabaseFor, TEST_PG_URL } from './pg.js';

export type Transport = 'stdio' | 'ws';
export const TRANSPORTS: readonly Transport[] = ['stdio', 'ws'];

export interface WireEvent {
  kind: 'notification' | 'response' | 'error';
  method?: string;
  payload: unknown;
}

export interface Client {
  /** The typed client this test client wraps. */
  client: ToolgateClient;
  /** Its vscode-jsonrpc connection (`client.connection`), for raw sends such as `$/cancelRequest`. */
  rpc: MessageConnection;
  /** Every notification and response on this client, in arrival order. */
  wire: WireEvent[];
  request<T = unknown>(method: string, params?: unknown): Promise<T>;
  close(): Promise<void>;
}

export interface Host extends Client {
  transport: Transport;
  proc: ChildProcessWithoutNullStreams;
  dbPath: string;
  dataDir: string;
  /** ws only: the listening address. */
  port?: number;
  stderr(): string;
  /** Another WebSocket connection to the same daemon (ws only). */
  connect(): Promise<Client>;
  /** Ends the daemon the polite way (shutdown/exit on stdio, SIGTERM on ws); resolves with its exit code once its stderr is read to the end. */
  stop(): Promise<number | null>;
  exited: Promise<number | null>;
}

export interface StartOptions {
  transport?: Transport;
  args?: string[];
  env?: Record<string, string>;
  dataDir?: string;
  /** The database (path or URL) when it is not the data folder's own — e.g. two daemons on one PostgreSQL database. */
  db?: string;
}

/**
 * Every result and `tool/result` notification a test receives is validated against schemas/:
 * a notification that does not match fails the client's next request.
 */
export function makeClient(tg: ToolgateClient, close: () => Promise<void> = () => tg.close()): Client {
  const wire: WireEvent[] = [];
  const violations: string[] = [];
  tg.onAnyNotification((method, params) => {
    wire.push({ kind: 'notification', method, payload: params });
    if (method === 'tool/result' || method === 'tool/approval') {
      try {
        assertWireShape(method === 'tool/result' ? 'ToolResultNotification' : 'ToolApprovalNotification', params);
      } catch (err) {
        violations.push((err as Error).message);
      }
    }
  });
  return {
    client: tg,
    rpc: tg.connection,
    wire,
    async request<T>(method: string, params?: unknown): Promise<T> {
      try {
        const result = await tg.request<T>(method, params);
        wire.push({ kind: 'response', method, payload: result });
        if (violations.length > 0) throw new Error(`notification off schema: ${violations.join('\n')}`);
        if (Object.hasOwn(RESULT_SHAPE, method)) assertResultShape(method, result);
        return result;
      } catch (err) {
        wire.push({ kind: 'error', method, payload: err });
        throw err;
      }
    },
    close,
  };
}

export async function connectWs(port: number): Promise<Client> {
  return makeClient(await ToolgateClient.connect(`ws://127.0.0.1:${port}/rpc`));
}

export async function startHost(opts: StartOptions = {}): Promise<Host> {
  const transport = opts.transport ?? 'stdio';
  const dataDir = opts.dataDir ?? tempDir();
  // The PostgreSQL pass: the daemons of one data folder share one fresh database.
  const dbPath = opts.db ?? (TEST_PG_URL ? await pgDatabaseFor(dataDir) : join(dataDir, 'toolgate.db'));
  // A database URL (it holds a password) goes in TOOLGATE_DB, as the docs advise, never in argv.
  const viaEnv = /^postgres(ql)?:\/\//i.test(dbPath);
  const dbArgs = viaEnv ? [] : ['--db', dbPath];
  const env = {
    PATH: process.env.PATH ?? '',
    TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET,
    // The data folder holds the signing key (and a dev secret): the test's own folder, never the real home.
    TOOLGATE_HOME: dataDir,
    ...(viaEnv ? { TOOLGATE_DB: dbPath } : {}),
    ...opts.env,
  };
  let proc: ChildProcessWithoutNullStreams;
  let client: Client | undefined;
  let port: number | undefined;
  let stderr = '';
  let onListening: ((port: number) => void) | undefined;
  if (transport === 'stdio') {
    const tg = ToolgateClient.spawn({ command: [process.execPath, TOOLGATE_BIN], args: [...dbArgs, ...(opts.args ?? [])], env });
    proc = tg.process!;
    client = makeClient(tg, async () => tg.connection.dispose());
  } else {
    proc = spawn(process.execPath, [TOOLGATE_BIN, 'serve', '--ws', '--port', '0', ...dbArgs, ...(opts.args ?? [])], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  }
  proc.stderr.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
    // Looked for only until found: a daemon logs a line per call, and scanning its whole log again on
    // every chunk cost the suites that make thousands of calls on one daemon seconds of CPU.
    if (!onListening) return;
    const m = /^\{"listening":\{"host":"[^"]*","port":(\d+)\}\}$/m.exec(stderr);
    if (m) {
      onListening(Number(m[1]));
      onListening = undefined;
    }
  });
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  // Log lines leave the daemon in batches, up to 25 ms after they are logged, and on their own pipe: a
  // process can exit before its last lines are read. `stop()` waits for the pipe to close too, so a check of
  // stderr after it sees every line (a leak in the last batch included).
  const stderrClosed = new Promise<void>((r) => proc.stderr.once('close', () => r()));
  if (transport === 'ws') {
    let neverListened: NodeJS.Timeout | undefined;
    port = await new Promise<number>((resolve, reject) => {
      onListening = resolve;
      proc.once('exit', (code) => reject(new Error(`daemon exited with ${code} before listening:\n${stderr}`)));
      neverListened = setTimeout(() => {
        // A daemon that never listened is not left behind: it would keep the test file's process alive.
        // Generous: on a loaded 2-core machine a daemon's start alone has taken over 15 s.
        proc.kill('SIGKILL');
        reject(new Error(`daemon did not listen in time:\n${stderr}`));
      }, 60_000);
    }).finally(() => clearTimeout(neverListened));
    client = await connectWs(port);
  }
  if (!client) throw new Error('unreachable: no client');

  const extra: Client[] = [];
  const host: Host = {
    ...client,
    transport,
    proc,
    dbPath,
    dataDir,
    ...(port === undefined ? {} : { port }),
    exited,
    stderr: () => stderr,
    async connect() {
      if (port === undefined) throw new Error('connect() needs the ws transport');
      const c = await connectWs(port);
      extra.push(c);
      return c;
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        if (transport === 'stdio') {
          try {
            await client.request('shutdown');
            await client.client.exit();
          } catch {
            /* already gone */
          }
        } else {
          for (const c of extra) await c.close().catch(() => {});
          await client.close().catch(() => {});
          proc.kill('SIGTERM');
        }
      }
      const code = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 15_000).unref())]);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      const read = await Promise.race([stderrClosed.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 5_000).unref())]);
      client.rpc.dispose();
      // A check of stderr after stop() must see all of it: a pipe still open 5 s after the exit is a fault to report.
      if (!read) throw new Error(`the daemon's stderr did not close within 5 s of its exit; its log so far:\n${stderr.slice(-2000)}`);
      return code;
    },
  };
  return host;
}

/** `initialize` (once per client) then `session/open` with a bearer token. */
export async function openSession(
  client: Client,
  token: string,
  extra: Record<string, unknown> = {},
): Promise<{ session_id: string; user_id: string; enabled_skills: string[]; allowed_actions: string[] }> {
  if (!client.wire.some((e) => e.method === 'initialize')) {
    await client.request('initialize', { protocol_version: '1', client_info: { name: 'test-host', version: '0' } });
  }
  return client.request('session/open', { auth: { type: 'bearer', token }, ...extra });
}

/** The JSON-RPC error a request fails with; fails the test when it succeeds or fails otherwise. */
export async function rpcError(work: Promise<unknown>): Promise<ResponseError<unknown>> {
  try {
    await work;
  } catch (err) {
    assert.ok(err instanceof ResponseError, `expected a JSON-RPC error, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a JSON-RPC error');
}
