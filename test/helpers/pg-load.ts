/**
 * A steady load of calls from hosts that retry each call with its
 * tool_call_id until it succeeds — what the outage tests (pg-outage,
 * pg-pgbouncer) run while they take the database away — and the checks they
 * make afterwards: the daemon survived, every failure was the clear
 * "database unavailable", every attempted call has exactly one effect.
 */
import assert from 'node:assert/strict';
import { openSession, type Client, type Host } from './host.js';
import { mintBearer } from './tokens.js';
import { dbRows } from './db.js';
import { pgQuery } from './pg.js';
import type { ToolResponse } from '../../src/protocol/index.js';

/** Calls in flight at once (each worker sends its next call when the last one is stored). */
export const WORKERS = 4;
/** How long a host keeps retrying one call before the test gives up on the daemon. */
const RETRY_DEADLINE_MS = 30_000;

const create = (title: string) => ({
  module: 'calendar',
  method: 'create',
  input: { title, start_at: '2026-10-01T09:00:00Z', end_at: '2026-10-01T10:00:00Z' },
});

export const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A host's load: WORKERS loops, each sending calls with fresh ids and
 * retrying every call with the same id until it succeeds, until `finish()`.
 */
export class Load {
  readonly attempted = new Set<string>();
  readonly acked = new Set<string>();
  /** Every answer that was not a success: what a host saw while the database was away. */
  readonly failures: string[] = [];
  private stopping = false;
  private readonly workers: Promise<void>[];
  private readonly waiters: (() => void)[] = [];

  /** `describeDaemon`: what a give-up error adds (whether the daemon still runs, its last log lines). */
  constructor(clients: { client: Client; session: string }[], private readonly describeDaemon: () => string = () => '') {
    this.workers = clients.map((c, w) =>
      this.work(c.client, c.session, w).catch((err: Error) => {
        // A call that never got stored ends the test at once, whatever it is waiting for.
        this.error ??= err;
        this.stopping = true;
        for (const wake of this.waiters.splice(0)) wake();
      }),
    );
  }

  private error: Error | undefined;

  private async work(client: Client, session: string, w: number): Promise<void> {
    for (let n = 0; !this.stopping; n++) {
      const id = `w${w}-${n}`;
      this.attempted.add(id);
      const deadline = Date.now() + RETRY_DEADLINE_MS;
      for (;;) {
        try {
          const res = await client.request<ToolResponse>('tool/invoke', { session_id: session, thread_id: `t${w % 2}`, tool_call_id: id, args: create(id) });
          if (res.status === 'success') break;
          this.failures.push(res.content[0]?.text ?? JSON.stringify(res));
        } catch (err) {
          this.failures.push(`JSON-RPC error: ${(err as Error).message}`);
        }
        if (Date.now() > deadline) {
          throw new Error(`${id} was not stored within ${RETRY_DEADLINE_MS} ms of retries; last answers: ${this.failures.slice(-3).join(' | ')}${this.describeDaemon()}`);
        }
        await delay(25); // a host's pause between retries
      }
      this.acked.add(id);
      for (const wake of this.waiters.splice(0)) wake();
    }
  }

  /** Resolves once `n` more calls have been acknowledged (the daemon serves). */
  async ackedMore(n: number): Promise<void> {
    const target = this.acked.size + n;
    while (this.acked.size < target && !this.error) await new Promise<void>((r) => this.waiters.push(r));
    if (this.error) throw this.error;
  }

  /** Stops sending new calls; resolves when every call sent so far is stored. */
  async finish(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.workers);
    if (this.error) throw this.error;
  }
}

export async function startLoad(host: Host): Promise<Load> {
  const clients = [host as Client, ...(await Promise.all(Array.from({ length: WORKERS - 1 }, () => host.connect())))];
  const sessions = await Promise.all(clients.map(async (client) => ({ client, session: (await openSession(client, await mintBearer('alice'))).session_id })));
  return new Load(sessions, () => {
    const { exitCode, signalCode } = host.proc;
    const tail = host.stderr().split('\n').slice(-40).join('\n');
    return `\ndaemon ${exitCode === null && signalCode === null ? 'still running' : `exited (code ${exitCode}, signal ${signalCode})`}; its last log lines:\n${tail}`;
  });
}

/** What the database holds per attempted call: exactly one tool message, one call record, one event. */
export async function assertExactlyOnce(db: string, load: Load): Promise<void> {
  const count = async (sql: string) => new Map((await dbRows<{ k: string; n: number }>(db, sql)).map((r) => [r.k, Number(r.n)]));
  const messages = await count("SELECT tool_call_id AS k, count(*) AS n FROM messages WHERE role = 'tool' GROUP BY tool_call_id");
  const records = await count('SELECT tool_call_id AS k, count(*) AS n FROM tool_calls GROUP BY tool_call_id');
  const events = await count('SELECT title AS k, count(*) AS n FROM events GROUP BY title');
  const wrong: string[] = [];
  for (const id of load.attempted) {
    const m = messages.get(id) ?? 0;
    const r = records.get(id) ?? 0;
    const e = events.get(id) ?? 0;
    if (m !== 1 || r !== 1 || e !== 1) wrong.push(`${id}: ${m} messages, ${r} records, ${e} events`);
  }
  assert.deepEqual(wrong, [], 'every attempted call has exactly one effect');
  assert.equal(events.size, load.attempted.size, 'no event without an attempted call');
  assert.equal(messages.size, load.attempted.size, 'no tool message without an attempted call');
}

export function assertSurvived(host: Host, load: Load): void {
  assert.equal(host.proc.exitCode, null, `the daemon exited:\n${host.stderr()}`);
  assert.equal(host.proc.signalCode, null);
  assert.doesNotMatch(host.stderr(), /Unhandled/, 'no unhandled error or rejection');
  const unclear = load.failures.filter((f) => !/database unavailable/.test(f));
  assert.deepEqual(unclear, [], 'a call in flight fails only with the clear "database unavailable" error');
  assert.equal(load.acked.size, load.attempted.size, 'every attempted call was acknowledged in the end');
}


/**
 * The cut test: under the load, the server ends every session of database
 * `dbName` `rounds` times, 300 ms apart (`pg_terminate_backend`, run on
 * `adminUrl`); then new calls must be acknowledged, every call sent must end
 * stored, and the checks above hold. Resolves with the load for more checks.
 */
export async function loadThroughCuts(host: Host, adminUrl: string, dbUrl: string, dbName: string, rounds: number): Promise<Load> {
  const load = await startLoad(host);
  await load.ackedMore(WORKERS);
  // `rounds` cuts, and more (up to four times as many) until one has met a call in flight: on a loaded machine
  // a subprocess call can spend the first cuts starting its process, before it holds a database session.
  for (let round = 0; round < rounds || (load.failures.length === 0 && round < rounds * 4); round++) {
    await pgQuery(adminUrl, 'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [dbName]);
    await delay(300);
  }
  // Serves again: new calls are acknowledged after the last cut.
  await load.ackedMore(WORKERS);
  await load.finish();
  assertSurvived(host, load);
  await assertExactlyOnce(dbUrl, load);
  return load;
}
