/**
 * One daemon against three daemons behind HAProxy (round-robin, no affinity), on one PostgreSQL database:
 * calls/s of `calendar.create` over WebSocket at concurrency 8, the two interleaved round by round. It checks
 * the capacity model's balancer line (docs/protocols/postgresql.md, "How far it scales"): N daemons behind a
 * balancer give min(N × one daemon's calls/s, what the server and the shared cores allow).
 *
 *   npm run build && BENCH_PG_URL=postgres://… node dist/bench/lb.js      # CALLS (300) per run, ROUNDS (3)
 *
 * `BENCH_PG_URL` must be a role with CREATEDB: a fresh database is made on it and dropped at the end.
 * Debian's haproxy must be installed. Not part of `npm run bench` (it needs both).
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { ToolgateClient } from '../src/client/index.js';
import { startHost, type Host } from '../test/helpers/host.js';
import { startHaproxy } from '../test/helpers/haproxy.js';
import { mintBearer } from '../test/helpers/tokens.js';
import { pgAdmin } from './pg-admin.js';

const base = process.env.BENCH_PG_URL;
if (!base) throw new Error('set BENCH_PG_URL (a role with CREATEDB)');
const CONCURRENCY = 8;
const CALLS = Number(process.env.CALLS ?? 300);
const ROUNDS = Number(process.env.ROUNDS ?? 3);

const admin = (sql: string) => pgAdmin(base, sql);

/** calls/s of CALLS creates at CONCURRENCY, each worker a WebSocket session of its own on `url`. */
async function run(url: string, token: string, label: string): Promise<number> {
  const workers = await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const c = await ToolgateClient.connect(url);
      await c.connection.sendRequest('initialize', { protocol_version: '1' });
      const s = (await c.connection.sendRequest('session/open', { auth: { type: 'bearer', token } })) as { session_id: string };
      return { c, session: s.session_id };
    }),
  );
  let next = 0;
  const started = performance.now();
  await Promise.all(
    workers.map(async ({ c, session }, w) => {
      for (let i = next++; i < CALLS; i = next++) {
        const input = { title: `b${i}`, start_at: '2026-10-01T09:00:00Z', end_at: '2026-10-01T10:00:00Z' };
        const r = (await c.connection.sendRequest('tool/invoke', {
          session_id: session,
          thread_id: `${label}-${w}`,
          tool_call_id: `c${i}`,
          args: { module: 'calendar', method: 'create', input },
        })) as { status: string };
        if (r.status !== 'success') throw new Error(`a call failed: ${JSON.stringify(r)}`);
      }
    }),
  );
  const rate = CALLS / ((performance.now() - started) / 1000);
  for (const { c } of workers) await c.close();
  return rate;
}

const name = `tg_bench_${randomBytes(6).toString('hex')}`;
await admin(`CREATE DATABASE ${name}`);
const url = new URL(base);
url.pathname = `/${name}`;
const daemons: Host[] = [];
try {
  for (let i = 0; i < 3; i++) daemons.push(await startHost({ transport: 'ws', db: url.toString(), args: ['--executor', 'inprocess'] }));
  const lb = await startHaproxy(daemons.map((d) => d.port!));
  try {
    const token = await mintBearer('bench');
    const one = `ws://127.0.0.1:${daemons[0]!.port}/rpc`;
    const three = `ws://127.0.0.1:${lb.port}/rpc`;
    await run(one, token, 'warm-one');
    await run(three, token, 'warm-three');
    const rates: Array<{ one: number; three: number }> = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const r = { one: await run(one, token, `one-${round}`), three: await run(three, token, `three-${round}`) };
      rates.push(r);
      console.log(`round ${round}: one daemon ${r.one.toFixed(0)} calls/s, three behind haproxy ${r.three.toFixed(0)} calls/s`);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const m = { one: median(rates.map((r) => r.one)), three: median(rates.map((r) => r.three)) };
    console.log(JSON.stringify({ ...m, ratio: m.three / m.one, loadavg: loadavg() }));
  } finally {
    await lb.stop();
  }
} finally {
  for (const d of daemons) await d.stop().catch(() => {});
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}
