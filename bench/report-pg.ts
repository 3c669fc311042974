/**
 * The PostgreSQL section of bench/RESULTS.md: the table, the CPU per call, the
 * round trips, the targets of issue 20 item 5 and the capacity model. It sits
 * between two markers so a PostgreSQL-only run (`BENCH_ONLY=pg`) replaces it in
 * place and leaves the other sections alone.
 */
import type { PgEntryKey, PgResult } from './pg.js';
import { capacity } from './pg-capacity.js';
import { fmtMs, fmtRate, fmtRatio, medianRatio } from './stats.js';

export const PG_BEGIN = '<!-- pg: generated section, replaced by a BENCH_ONLY=pg run -->';
export const PG_END = '<!-- pg: end -->';

/** The round-trip counts carried from run to run (a hidden line), for the "before" column. */
export interface RoundTripHistory {
  now: { perCall: number; commit: string };
  before?: { perCall: number; commit: string };
}

const HISTORY = /<!-- pg-round-trips: (\{.*?\}) -->/;

export function readRoundTrips(text: string): RoundTripHistory | undefined {
  const m = HISTORY.exec(text);
  try {
    return m ? (JSON.parse(m[1]!) as RoundTripHistory) : undefined;
  } catch {
    return undefined;
  }
}

/** Replace the PostgreSQL section of a RESULTS.md in place; undefined when it has none to replace. */
export function replacePgSection(text: string, section: string): string | undefined {
  const a = text.indexOf(PG_BEGIN);
  const b = text.indexOf(PG_END);
  if (a >= 0 && b > a) return text.slice(0, a) + section + text.slice(b + PG_END.length);
  // A file written before the markers: its PostgreSQL heading up to the next heading.
  const old = /^## PostgreSQL: one daemon, two daemons on one database$/m.exec(text);
  if (!old) return undefined;
  const next = text.slice(old.index + old[0].length).search(/^## /m);
  const end = next < 0 ? text.length : old.index + old[0].length + next;
  return `${text.slice(0, old.index)}${section}\n\n${text.slice(end)}`;
}

const LABEL: Record<PgEntryKey, string> = {
  sqlite: 'toolgate `--executor inprocess`, SQLite (the reference)',
  pg1: 'PostgreSQL, one daemon',
  pg2: 'PostgreSQL, two daemons on one database (calls alternate)',
};

export function renderPg(p: PgResult, ctx: { commit: string; date: string; load: string; cores: number; previous?: RoundTripHistory }): string {
  const L: string[] = [PG_BEGIN, '## PostgreSQL: one daemon, two daemons on one database', ''];
  if (p.skipped || !p.entries || !p.ratio || !p.server) {
    L.push(p.skipped ?? 'PostgreSQL rows skipped.', '', PG_END);
    return L.join('\n');
  }
  const s = p.server;
  const e = p.entries;
  L.push(`Run of ${ctx.date}, commit \`${ctx.commit}\`, load average at the start ${ctx.load} on ${ctx.cores} cores (a shared machine: other engineers' work ran alongside). ` +
    `\`calendar.create\` over stdio, \`--executor inprocess\`, \`store.synchronous\` = ${p.synchronous} for SQLite; PostgreSQL ${s.version} ` +
    `(fsync ${s.fsync}, synchronous_commit ${s.synchronousCommit}) on this machine over TCP loopback, ${s.source}, pool of 10 per daemon. ` +
    `${p.rounds} interleaved rounds; per round and entry ${p.seqPerRound} sequential calls, then ${p.concPerRound} at concurrency ${p.concurrency} ` +
    '(the two daemons share it: call i goes to daemon i mod 2); calls spread over 8 threads (call i → thread i mod 8) for every entry; ratios are medians of per-round ratios to the SQLite row. ' +
    'CPU per call is utime + stime from /proc over the concurrent window, divided by its calls: the daemon process(es); PostgreSQL\'s client backends (children of the postmaster whose title names a client); ' +
    'the postmaster and its other children (WAL writer, checkpointer, …). Medians over the rounds.', '');
  L.push(`| entry | p50 | calls/s @${p.concurrency} | p50 ÷ SQLite | calls/s ÷ SQLite | daemon CPU/call | PG backends CPU/call | PG other CPU/call | write xacts/call | WAL/call |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const k of ['sqlite', 'pg1', 'pg2'] as PgEntryKey[]) {
    const x = e[k];
    const pgOnly = (v: string) => (k === 'sqlite' ? '—' : v);
    L.push(`| ${LABEL[k]} | ${fmtMs(x.p50)} | ${fmtRate(x.rate)} | ${fmtRatio(p.ratio(k, 'p50'))} | ${fmtRatio(p.ratio(k, 'rate'))} | ${fmtMs(x.daemonCpu)} | ` +
      `${pgOnly(fmtMs(x.backendCpu))} | ${pgOnly(fmtMs(x.otherCpu))} | ${pgOnly(x.xactsPerCall.toFixed(2))} | ${pgOnly(`${(x.walBytesPerCall / 1024).toFixed(1)} KiB`)} |`);
  }
  L.push('');

  const rt = p.roundTripsPerCall ?? Number.NaN;
  const before = ctx.previous && ctx.previous.now.commit !== ctx.commit ? ctx.previous.now : ctx.previous?.before;
  L.push('Round trips per call: one more daemon, alone, with every connection through a counting proxy (test/helpers/pg-wire-proxy.ts), 40 sequential calls after a warm-up; ' +
    'a round trip is a client message that waits for the server\'s ReadyForQuery (Sync, or a simple Query).', '');
  L.push('| round trips per sequential call | commit | value |', '|---|---|---:|');
  if (before) L.push(`| before (an earlier run of this section) | \`${before.commit}\` | ${before.perCall.toFixed(2)} |`);
  L.push(`| this run | \`${ctx.commit}\` | ${rt.toFixed(2)} |`, '');
  if (p.notifyTripsPerCall !== undefined) {
    L.push(`Besides, ${p.notifyTripsPerCall.toFixed(2)} statements per sequential call on the daemon's notifying connection: the fan-out NOTIFY, sent after the commit (no call waits for it; ` +
      'calls whose commits land while one is sent share the next).', '');
  }
  const history: RoundTripHistory = { now: { perCall: rt, commit: ctx.commit }, ...(before ? { before } : {}) };
  L.push(`<!-- pg-round-trips: ${JSON.stringify(history)} -->`, '');

  const two = medianRatio(e.pg2.rounds.map((x) => x.rate), e.pg1.rounds.map((x) => x.rate));
  const targets: Array<[string, number, string, boolean]> = [
    [`one daemon's calls/s @${p.concurrency} ÷ SQLite daemon's`, p.ratio('pg1', 'rate'), '≥ 0.70×', p.ratio('pg1', 'rate') >= 0.7],
    ['one daemon\'s sequential p50 ÷ SQLite daemon\'s', p.ratio('pg1', 'p50'), '≤ 1.50×', p.ratio('pg1', 'p50') <= 1.5],
    [`two daemons' calls/s @${p.concurrency} ÷ one daemon's (same total concurrency)`, two, '≥ 1.00×', two >= 1],
  ];
  L.push('| target (issue 20 item 5) | measured | goal | met? |', '|---|---:|---|---|');
  for (const [what, v, goal, ok] of targets) L.push(`| ${what} | ${fmtRatio(v)} | ${goal} | ${!Number.isFinite(v) ? 'not measured' : ok ? 'yes' : '**no**'} |`);
  L.push('');

  const m = capacity(p, ctx.cores);
  if (m && p.commit) {
    const c = p.commit;
    L.push('### Capacity model (computed from this run; method in docs/protocols/postgresql.md, "How far it scales")', '');
    L.push(`One call costs the daemon **${fmtMs(m.daemonMs)}** of CPU and PostgreSQL **${fmtMs(m.backendMs + m.otherMs)}** ` +
      `(${fmtMs(m.backendMs)} in its backend, ${fmtMs(m.otherMs)} in the WAL writer, checkpointer and postmaster), in ${m.xactsPerCall.toFixed(2)} write transactions. So:`, '');
    L.push(`- one daemon on a core of its own drives ≤ 1000 ÷ ${m.daemonMs.toFixed(3)} ms = **${fmtRate(m.perDaemonCore)} calls/s**;`);
    L.push(`- one PostgreSQL core feeds ≤ 1000 ÷ ${(m.backendMs + m.otherMs).toFixed(3)} ms = **${fmtRate(m.perServerCore)} calls/s**, so a K-core server feeds K × ${fmtRate(m.perServerCore)} ` +
      `and carries K × ${m.daemonsPerServer(1).toFixed(2)} daemons before its CPU is the limit (K = 4: ${m.daemonsPerServer(4).toFixed(1)}, K = 16: ${m.daemonsPerServer(16).toFixed(1)});`);
    L.push(`- on this machine the daemon(s) and the server share ${ctx.cores} cores: ≤ ${ctx.cores} × 1000 ÷ ${(m.daemonMs + m.backendMs + m.otherMs).toFixed(3)} ms = ` +
      `**${fmtRate(m.sharedMachine)} calls/s** whatever the number of daemons (the bench client and the other engineers' work take their share too) — why a second daemon cannot add throughput here;`);
    L.push(`- the next bottleneck after CPU is the commit: one durable commit takes ${fmtMs(c.durableP50)} (${fmtMs(c.asyncP50)} with synchronous_commit off: ` +
      `the WAL flush is ${fmtMs(m.fsyncMs)}). At concurrency ${p.concurrency} plain commits share flushes (group commit): **${fmtRate(c.plainRate)} commits/s**, the calls' ceiling for the whole server. ` +
      `A commit that carried its own NOTIFY would take one server-wide lock through its flush, so such commits go one at a time: ${fmtRate(c.notifyRate)} commits/s — ` +
      'why each call\'s fan-out NOTIFY is sent after its commit, batched, in a transaction that waits for no flush (src/store/pg/notifier.ts);');
    L.push(`- one thread's calls queue on its \`threads\` row lock, held through its commit: ≤ 1000 ÷ ${c.durableP50.toFixed(2)} ms = **${fmtRate(m.perThread)} calls/s per thread**.`, '');
    L.push('| daemons (a core each) | server cores | projected calls/s | bound by |', '|---:|---:|---:|---|');
    for (const [n, k] of [[1, 2], [2, 2], [2, 4], [4, 4], [4, 8], [8, 8], [8, 16]] as const) {
      const x = m.project(n, k);
      L.push(`| ${n} | ${k} | ${fmtRate(x.rate)} | ${x.bound} |`);
    }
    L.push('');
  }
  L.push(PG_END);
  return L.join('\n');
}
