/**
 * Entries (c) and (d): toolgate `serve --stdio`, spoken to only through its
 * public protocol (initialize, session/open with a bearer token, tool/invoke),
 * so the bench keeps working whatever changes inside.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { BEARER_SECRET, TOOLGATE_BIN } from '../env.js';
import { calendarInput } from '../anchors/calendar-input.js';
import { spawnStdioPeer, type StdioPeer } from '../stdio-peer.js';
import type { Target } from '../target.js';

export type Executor = 'inprocess' | 'subprocess';
export type Synchronous = 'FULL' | 'NORMAL';

/** A user bearer token as an issuer would mint it (HS256, the configured secret). */
export function mintBearer(sub: string): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(new TextEncoder().encode(BEARER_SECRET));
}

/** A config file with the default profile and the store's durability. */
export function writeConfig(dir: string, synchronous: Synchronous, extra: Record<string, unknown> = {}, profile: Record<string, unknown> = {}): string {
  const file = join(dir, `toolgate-${synchronous}.json`);
  const config = {
    agents: { default: { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.read', 'memory.*'], ...profile } },
    store: { synchronous },
    ...extra,
  };
  writeFileSync(file, JSON.stringify(config));
  return file;
}

export function toolgateEnv(dataDir: string): Record<string, string> {
  return { TOOLGATE_BEARER_SECRET: BEARER_SECRET, TOOLGATE_HOME: dataDir, TOOLGATE_LOG_LEVEL: process.env.BENCH_TOOLGATE_LOG_LEVEL ?? 'info' };
}

interface ToolResponse {
  status: string;
  content: Array<{ text: string }>;
}

export interface ToolgateStdio extends Target {
  peer: StdioPeer;
  sessionId: string;
  request<T>(method: string, params: unknown): Promise<T>;
}

export async function startToolgateStdio(opts: {
  executor: Executor;
  /** A SQLite file (`--db`), or a `postgres://` URL, given through TOOLGATE_DB so its password stays out of argv. */
  dbFile: string;
  dataDir: string;
  synchronous: Synchronous;
  /** The thread of call `i` (default: one thread per executor). */
  thread?: string | ((i: number) => string);
  nodeArgs?: string[];
  /**
   * Run the daemon from dist/src rather than its bundle (TOOLGATE_UNBUNDLED=1): for probes that hook
   * modules or name them by file (a CPU profile's attribution, coverage counts, module hooks).
   */
  unbundled?: boolean;
  /** More environment for the daemon (a probe's settings). */
  env?: Record<string, string>;
  /** Name shown in the tables. */
  name?: string;
  /** Another build's launcher (an A/B against it, bench/ab.ts); default this checkout's. */
  bin?: string;
  /** Subprocess executor: wait until the daemon says how it starts project-cli (its snapshot probe is done). */
  awaitLaunch?: boolean;
  /** More of the default profile (`agents.default`), e.g. an `approval` list: bench/ab.ts's approval section. */
  profile?: Record<string, unknown>;
}): Promise<ToolgateStdio> {
  const config = writeConfig(opts.dataDir, opts.synchronous, {}, opts.profile);
  const viaEnv = /^postgres(ql)?:\/\//i.test(opts.dbFile);
  const peer = spawnStdioPeer(
    [...(opts.nodeArgs ?? []), opts.bin ?? TOOLGATE_BIN, 'serve', '--stdio', '--executor', opts.executor, ...(viaEnv ? [] : ['--db', opts.dbFile]), '--config', config],
    { ...toolgateEnv(opts.dataDir), ...(viaEnv ? { TOOLGATE_DB: opts.dbFile } : {}), ...(opts.unbundled ? { TOOLGATE_UNBUNDLED: '1' } : {}), ...opts.env },
  );
  const request = <T>(method: string, params: unknown) => peer.rpc.sendRequest(method, params) as Promise<T>;
  try {
    await request('initialize', { protocol_version: '1', client_info: { name: 'toolgate-bench', version: '1' } });
  } catch (err) {
    throw new Error(`toolgate did not start: ${(err as Error).message}\n${peer.stderr().slice(-2000)}`, { cause: err });
  }
  if (opts.awaitLaunch) await waitForLine(() => peer.stderr(), '"msg":"project-cli launch"');
  const { session_id: sessionId } = await request<{ session_id: string }>('session/open', { auth: { type: 'bearer', token: await mintBearer('bench') } });
  const thread = typeof opts.thread === 'function' ? opts.thread : () => (opts.thread as string | undefined) ?? `bench-${opts.executor}`;
  return {
    name: opts.name ?? `toolgate ${opts.executor} (${opts.synchronous})`,
    pid: peer.proc.pid!,
    peer,
    sessionId,
    request,
    async call(i) {
      const res = await request<ToolResponse>('tool/invoke', {
        session_id: sessionId,
        thread_id: thread(i),
        tool_call_id: `c${i}`,
        args: { module: 'calendar', method: 'create', input: calendarInput(i) },
      });
      if (res.status !== 'success') throw new Error(`toolgate call failed: ${res.content[0]?.text.slice(0, 300)}`);
    },
    stop: () => peer.stop({ shutdown: true }),
  };
}

/** Polls `text()` until it holds `needle` (a daemon's log line); fails after 30 s. */
async function waitForLine(text: () => string, needle: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!text().includes(needle)) {
    if (Date.now() > deadline) throw new Error(`toolgate never logged ${needle}:\n${text().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
