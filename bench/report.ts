/**
 * The bench's tables, as Markdown: printed to the console and written to
 * bench/RESULTS.md. Everything above the analysis marker is regenerated on each
 * run; the hand-written analysis below it is kept.
 */
import type { Machine } from './machine.js';
import { ENTRY_KEYS, type EntryKey, type SideBySide } from './side-by-side.js';
import type { HistoryResult } from './history.js';
import type { PgResult } from './pg.js';
import { renderPg, type RoundTripHistory } from './report-pg.js';
import type { WsResult } from './ws-load.js';
import type { StartupRow } from './startup.js';
import type { DaemonStartupRow } from './daemon-startup.js';
import type { ProfileSummary } from './profile.js';
import type { FloorResult } from './floor.js';
import type { CommitBlockResult } from './commit-block.js';
import { renderCommitBlock } from './report-commit.js';
import { renderAb } from './report-ab.js';
import type { AbResult } from './ab.js';
import { fmtMb, fmtMs, fmtRate, fmtRatio, median } from './stats.js';
import type { SteadyResult } from './steady.js';

export const ANALYSIS_MARKER = '<!-- analysis: hand-written below this line, kept across runs -->';

export interface Results {
  machine: Machine;
  commit: string;
  seconds: number;
  sideBySide: SideBySide[];
  history?: HistoryResult;
  pg?: PgResult;
  ws?: WsResult;
  startup?: StartupRow[];
  daemonStartup?: DaemonStartupRow[];
  profile?: ProfileSummary;
  floor?: FloorResult;
  commitBlock?: CommitBlockResult;
  /** Interleaved A/Bs of in-process daemons (bench/ab.ts): the telemetry hooks, another build. */
  ab?: AbResult[];
  /** The in-process daemon and both MCP anchors after the same long warm-up (bench/steady.ts). */
  steady?: SteadyResult;
}

const LABEL: Record<EntryKey, string> = {
  echo: '(a) bare vscode-jsonrpc echo (the transport’s ceiling)',
  mcp: '(b) MCP SDK server: zod + 1 SQLite insert (the thin anchor)',
  mcpEq: '(b′) MCP SDK server: zod + toolgate’s writes in 1 transaction (the equal-work anchor)',
  inprocess: '(c) toolgate `--executor inprocess`',
  subprocess: '(d) toolgate `--executor subprocess` (project-cli from its start-up snapshot)',
  subprocessBundle: '(d′) toolgate `--executor subprocess`, project-cli from its bundle (`TOOLGATE_CLI_SNAPSHOT=off`)',
  node: '(e) bare `node -e 0` (one process start)',
};

/**
 * The daemon's own work per call at the start of issue 19 (commit 1ecf3da,
 * the floor section of that run's RESULTS.md): what "≤ 50 %" is measured against.
 */
export const OWN_WORK_START = { commit: '1ecf3da', p50: 2.07, perCall: 0.466 } as const;
const OWN_WORK_GOAL = 0.5;

interface Target {
  what: string;
  measured: number;
  goal: string;
  /** The bound, in the unit of `measured`; `atLeast`: measured ≥ limit is met, else measured ≤ limit. */
  limit: number;
  atLeast: boolean;
  fmt: (x: number) => string;
}

const met = (t: Target): boolean => (t.atLeast ? t.measured >= t.limit : t.measured <= t.limit);

/**
 * The daemon's own work per call: entry c minus the transport (echo) and its writes alone (the floor), ms.
 * With the floor's rounds interleaved with the side-by-side ones, the median of per-round differences (each
 * round's subtraction sees one moment of a shared disk); else the difference of the medians.
 */
export function ownWork(f: FloorResult, side: SideBySide): { p50: number; perCall: number } {
  const e = side.entries;
  if (!e.echo || !e.inprocess) return { p50: Number.NaN, perCall: Number.NaN };
  const seqOwn = (c: number, echo: number, writes: number) => c - (echo + writes);
  const concOwn = (c: number, echo: number, groupRate: number) => 1000 / c - 1000 / boundRate(echo, groupRate);
  const fr = f.perRound;
  if (f.interleaved && fr && fr.length === e.inprocess.rounds.length && fr.length === e.echo.rounds.length) {
    const c = e.inprocess.rounds;
    const a = e.echo.rounds;
    return {
      p50: median(fr.map((x, r) => seqOwn(c[r]!.p50, a[r]!.p50, x.toolgateP50))),
      perCall: median(fr.map((x, r) => concOwn(c[r]!.rate, a[r]!.rate, x.groupRate))),
    };
  }
  return { p50: seqOwn(e.inprocess.p50, e.echo.p50, f.toolgateP50), perCall: concOwn(e.inprocess.rate, e.echo.rate, f.toolgateGroupRate) };
}

export function targets(r: Results): Target[] {
  const out: Target[] = [];
  const ratio = (what: string, measured: number, limit: number, atLeast: boolean): Target =>
    ({ what, measured, goal: `${atLeast ? '≥' : '≤'} ${limit.toFixed(1)}×`, limit, atLeast, fmt: fmtRatio });
  // Issue 19's targets are at synchronous=FULL; the NORMAL tables are for reading only.
  const full = r.sideBySide.find((s) => s.synchronous === 'FULL');
  if (full) {
    const c = full.concurrency;
    out.push(ratio(`in-process calls/s @${c} ÷ equal-work MCP anchor (b′)`, full.ratio('inprocess', 'mcpEq', 'rate'), 1.5, true));
    out.push(ratio(`in-process calls/s @${c} ÷ thin MCP anchor (b)`, full.ratio('inprocess', 'mcp', 'rate'), 1.2, true));
    out.push(ratio('in-process sequential p50 ÷ equal-work MCP anchor (b′)', full.ratio('inprocess', 'mcpEq', 'p50'), 1.0, false));
    out.push(ratio('subprocess p50 ÷ bare node start', full.ratio('subprocess', 'node', 'p50'), 2.0, false));
    out.push(ratio('subprocess p50 ÷ bare node start, project-cli from its bundle (d′)', full.ratio('subprocessBundle', 'node', 'p50'), 2.0, false));
    if (r.floor && r.floor.synchronous === 'FULL') {
      const own = ownWork(r.floor, full);
      const s = OWN_WORK_START;
      const goal = (start: number) => `≤ ${fmtMs(start * OWN_WORK_GOAL)} (50 % of ${fmtMs(start)} at ${s.commit})`;
      out.push({ what: `the daemon's own work per call @${c} (floor section)`, measured: own.perCall, goal: goal(s.perCall), limit: s.perCall * OWN_WORK_GOAL, atLeast: false, fmt: fmtMs });
      out.push({ what: 'the daemon\'s own work per call, sequential (floor section)', measured: own.p50, goal: goal(s.p50), limit: s.p50 * OWN_WORK_GOAL, atLeast: false, fmt: fmtMs });
    }
  }
  if (r.steady && r.steady.synchronous === 'FULL') {
    const row = (entry: 'b' | 'b′') => r.steady!.rows.find((x) => x.entry === entry);
    const w = `at steady state (after ${r.steady.warm.toLocaleString('en')} + ${(2 * r.steady.warm).toLocaleString('en')} calls each)`;
    out.push(ratio(`in-process calls/s @8 ÷ b′, ${w}`, row('b′')?.rateRatio ?? Number.NaN, 1.5, true));
    out.push(ratio(`in-process calls/s @8 ÷ b, ${w}`, row('b')?.rateRatio ?? Number.NaN, 1.2, true));
    out.push(ratio(`in-process sequential p50 ÷ b′, ${w}`, row('b′')?.p50Ratio ?? Number.NaN, 1.0, false));
  }
  if (r.history) {
    out.push(ratio('history/get ui view ÷ raw SELECT (same transport)', r.history.uiRatio, 2, false));
    out.push(ratio('history/get context view ÷ raw SELECT (same transport)', r.history.contextRatio, 1.2, false));
  }
  if (r.ws) {
    const mb = (what: string, measured: number, limitMb: number): Target =>
      ({ what, measured, goal: `≤ ${limitMb} MB`, limit: limitMb * 1024 * 1024, atLeast: false, fmt: fmtMb });
    out.push(mb('idle RSS of the daemon', r.ws.idleRss, 80));
    out.push(mb(`peak RSS, ${r.ws.clients} WebSocket clients under load`, r.ws.loadRss, 150));
  }
  return out;
}

export function render(r: Results, previousPg?: RoundTripHistory): string {
  const L: string[] = [];
  const m = r.machine;
  L.push('# toolgate bench results', '');
  L.push(`Written by \`npm run bench\` (bench/run.ts) on ${m.date}, commit \`${r.commit}\`, in ${r.seconds.toFixed(0)} s.`, '');
  L.push(`Machine: ${m.cpu}, ${m.cores} cores, ${m.memory} memory, Node ${m.node}; load average at the start ${m.load}.`);
  L.push('Shared machine: ratios are medians of per-round ratios of interleaved rounds; absolute times are only indicative.', '');

  for (const s of r.sideBySide) {
    const e = s.entries;
    L.push(`## Side by side: \`calendar.create\` over stdio, \`synchronous=${s.synchronous}\``, '');
    const fast = e.inprocess ?? e.echo ?? e.mcp ?? e.mcpEq;
    const slow = e.subprocess ?? e.subprocessBundle ?? e.node;
    const counts = [fast && `${fast.seqPerRound}+${fast.concPerRound} for a–c`, slow && `${slow.seqPerRound}+${slow.concPerRound} for d–e`].filter(Boolean).join(', ');
    L.push(`${s.rounds} interleaved rounds; per round and entry: sequential calls, then calls at concurrency ${s.concurrency} ` +
      `(${counts}). Ratios are medians of per-round ratios (b = the thin MCP anchor, b′ = the equal-work one). ` +
      'p50 = median of the round p50s; p99 pooled over the rounds. toolgate is configured with `store.synchronous` = ' +
      `${s.synchronous}; a build that does not apply that key yet runs its store at its own default.`, '');
    L.push(`| entry | p50 | p99 | calls/s @${s.concurrency} | p99 @${s.concurrency} | p50 ÷ echo | calls/s ÷ echo | p50 ÷ b | calls/s ÷ b | p50 ÷ b′ | calls/s ÷ b′ | peak RSS |`);
    L.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const k of ENTRY_KEYS) {
      const x = e[k];
      if (!x) continue;
      const q = (den: EntryKey, what: 'p50' | 'rate') => fmtRatio(s.ratio(k, den, what));
      L.push(`| ${LABEL[k]} | ${fmtMs(x.p50)} | ${fmtMs(x.p99)} | ${fmtRate(x.rate)} | ${fmtMs(x.concP99)} | ${q('echo', 'p50')} | ${q('echo', 'rate')} | ${q('mcp', 'p50')} | ${q('mcp', 'rate')} | ${q('mcpEq', 'p50')} | ${q('mcpEq', 'rate')} | ${x.peakRss ? fmtMb(x.peakRss) : '—'} |`);
    }
    L.push('');
  }

  if (r.steady) renderSteady(L, r.steady);
  if (r.floor) renderFloor(L, r.floor, r.sideBySide.find((s) => s.synchronous === r.floor!.synchronous));
  if (r.commitBlock) renderCommitBlock(L, r.commitBlock);
  if (r.pg) L.push(renderPg(r.pg, { commit: r.commit, date: m.date, load: m.load, cores: m.cores, previous: previousPg }), '');
  for (const a of r.ab ?? []) renderAb(L, a);

  if (r.history) {
    const h = r.history;
    L.push(`## (f) \`history/get\` of ${h.pageSize} messages from a ${h.messages.toLocaleString('en')}-message database`, '');
    L.push('The raw anchor is the bare SELECT of the same rows (`SELECT * … ORDER BY seq DESC LIMIT 200`) answered by the echo server over the ' +
      'same stdio transport (vscode-jsonrpc does the JSON.stringify); the in-process line is the SELECT + JSON.stringify alone, for reference.', '');
    L.push('| request | median | ÷ raw (same transport) | ÷ raw in process | response bytes |', '|---|---:|---:|---:|---:|');
    L.push(`| history/get view=ui | ${fmtMs(h.ui)} | ${fmtRatio(h.uiRatio)} | ${fmtRatio(h.ui / h.rawInProcess)} | ${h.bytes.ui.toLocaleString('en')} |`);
    L.push(`| history/get view=context | ${fmtMs(h.context)} | ${fmtRatio(h.contextRatio)} | ${fmtRatio(h.context / h.rawInProcess)} | ${h.bytes.context.toLocaleString('en')} |`);
    L.push(`| raw SELECT over stdio | ${fmtMs(h.raw)} | 1.00× | ${fmtRatio(h.raw / h.rawInProcess)} | ${h.bytes.raw.toLocaleString('en')} |`);
    L.push(`| raw SELECT + JSON.stringify in process | ${fmtMs(h.rawInProcess)} | — | 1.00× | — |`, '');
  }

  if (r.ws) {
    const w = r.ws;
    L.push(`## (g) ${w.clients} WebSocket clients × ${w.callsPerClient} calls (\`serve --ws\`, in-process executor)`, '');
    L.push('| calls/s | p50 | p99 | idle RSS | RSS under load (max sampled) | peak RSS (VmHWM) |', '|---:|---:|---:|---:|---:|---:|');
    L.push(`| ${fmtRate(w.rate)} | ${fmtMs(w.p50)} | ${fmtMs(w.p99)} | ${fmtMb(w.idleRss)} | ${fmtMb(w.loadRss)} | ${fmtMb(w.peakRss)} |`, '');
  }

  if (r.startup) {
    L.push('## project-cli start-up, per import', '');
    L.push('Each line is a fresh process (interleaved rounds, medians of wall time); "extra" is over an empty ES module, which is what ' +
      '`bin/project-cli.mjs` is before it loads anything.', '');
    L.push('| probe | wall | extra |', '|---|---:|---:|');
    for (const s of r.startup) L.push(`| ${s.name} | ${fmtMs(s.wall)} | ${s.extra >= 0 ? '+' : ''}${fmtMs(s.extra)} |`);
    L.push('');
  }

  if (r.daemonStartup) {
    L.push('## toolgate start-up: the bundle (dist/daemon) and dist/src', '');
    L.push('Each line is a fresh process (interleaved rounds, medians). `serve --stdio` is timed from the spawn to the answer of ' +
      'its `initialize`, what a host waits for, and its resident memory is read then. "dist/src" is `TOOLGATE_UNBUNDLED=1`.', '');
    L.push('| probe | wall | RSS at `initialize` |', '|---|---:|---:|');
    for (const s of r.daemonStartup) L.push(`| ${s.name} | ${fmtMs(s.wall)} | ${s.rss === undefined ? '—' : fmtMb(s.rss)} |`);
    L.push('');
  }

  if (r.profile) {
    const p = r.profile;
    L.push(`## Where an in-process call’s CPU goes (\`--cpu-prof\`, ${p.calls} calls, self time)`, '');
    L.push(`Busy main-thread time ≈ ${fmtMs(p.busyPerCall / 1000)} per call (module loading at start-up left out; the machine's load inflates every figure alike).`, '');
    L.push('| area | per call | share |', '|---|---:|---:|');
    for (const a of p.areas) L.push(`| ${a.area} | ${fmtMs(a.usPerCall / 1000)} | ${(a.share * 100).toFixed(1)} % |`);
    L.push('', '| function (self) | per call |', '|---|---:|');
    for (const f of p.functions) L.push(`| \`${f.fn}\` | ${fmtMs(f.usPerCall / 1000)} |`);
    L.push('');
  }

  L.push('## Targets (issue 19 at `synchronous=FULL`; history and memory from issue 8)', '');
  L.push('| target | measured | goal | met? |', '|---|---:|---|---|');
  for (const t of targets(r)) {
    const verdict = !Number.isFinite(t.measured) ? 'not measured in this run' : met(t) ? 'yes' : `**no** (${missBy(t)})`;
    L.push(`| ${t.what} | ${t.fmt(t.measured)} | ${t.goal} | ${verdict} |`);
  }
  L.push('');
  return L.join('\n');
}

function missBy(t: Target): string {
  if (t.atLeast) return `${((1 - t.measured / t.limit) * 100).toFixed(0)} % short`;
  return t.fmt === fmtRatio ? `${fmtRatio(t.measured / t.limit)} over` : `${t.fmt(t.measured - t.limit)} over`;
}

function renderSteady(L: string[], s: SteadyResult): void {
  L.push(`## Side by side at steady state: \`calendar.create\` over stdio, \`synchronous=${s.synchronous}\``, '');
  L.push('The table above measures each entry over its first calls, while V8 still compiles the call paths. Here the in-process daemon and ' +
    `both MCP anchors (bench/steady.ts) first take the same warm-up — ${s.warm.toLocaleString('en')} sequential calls, then ` +
    `${(2 * s.warm).toLocaleString('en')} at concurrency 8 — then run ${s.rounds} interleaved rounds of ${s.seq} sequential + ${s.conc} ` +
    'calls at concurrency 8 in rotating order; ratios are medians of per-round ratios.', '');
  L.push('| entry | p50 | calls/s @8 | toolgate p50 ÷ it | toolgate calls/s ÷ it |', '|---|---:|---:|---:|---:|');
  const label = { b: LABEL.mcp, 'b′': LABEL.mcpEq, toolgate: LABEL.inprocess } as const;
  for (const x of s.rows) L.push(`| ${label[x.entry]} | ${fmtMs(x.p50)} | ${fmtRate(x.rate)} | ${fmtRatio(x.p50Ratio)} | ${fmtRatio(x.rateRatio)} |`);
  L.push('');
}

function renderFloor(L: string[], f: FloorResult, side: SideBySide | undefined): void {
  L.push(`## The floor: the SQLite writes alone, \`synchronous=${f.synchronous}\``, '');
  L.push('Each entry\'s statements and commit in the bench process — no transport, no validation, no projection: toolgate\'s rows of one real ' +
    'in-process `calendar.create` (audit row, event, call record, thread bump, tool message), the equal-work MCP anchor\'s statements for the ' +
    'same writes, and the thin MCP anchor\'s one insert. ' +
    `${f.rounds} ${f.interleaved ? 'rounds, each run right after the same round of the side-by-side table above' : 'interleaved rounds'}, medians. One toolgate call alone appends ${f.framesPerCall} WAL frames` +
    `${f.equalFramesPerCall !== undefined ? `, one equal-work anchor call ${f.equalFramesPerCall}` : ''}.`, '');
  L.push('| writes | per transaction (p50) | calls/s |', '|---|---:|---:|');
  L.push(`| toolgate, one call per transaction | ${fmtMs(f.toolgateP50)} | ${fmtRate(1000 / f.toolgateP50)} |`);
  L.push(`| toolgate, ${f.groupSize} calls per transaction (group commit) | — | ${fmtRate(f.toolgateGroupRate)} |`);
  if (f.equalP50 !== undefined) L.push(`| equal-work MCP anchor (b′), one call per transaction | ${fmtMs(f.equalP50)} | ${fmtRate(1000 / f.equalP50)} |`);
  L.push(`| thin MCP anchor (b), one insert per transaction | ${fmtMs(f.mcpP50)} | ${fmtRate(1000 / f.mcpP50)} |`, '');
  const e = side?.entries;
  if (!side || !e?.echo || !e.inprocess) return;
  const bound = e.echo.p50 + f.toolgateP50;
  const rate = boundRate(e.echo.rate, f.toolgateGroupRate);
  const own = ownWork(f, side);
  // The anchor issue 19's targets are set against: the equal-work one when it ran.
  const anchor = e.mcpEq ?? e.mcp;
  if (anchor) {
    const which = anchor === e.mcpEq ? 'equal-work MCP anchor (b′)' : 'thin MCP anchor (b)';
    L.push(`No in-process call can be faster than the transport plus its writes: echo p50 + toolgate's writes = ${fmtMs(bound)}, ` +
      `${fmtRatio(bound / anchor.p50)} the ${which}'s whole p50 (${fmtMs(anchor.p50)}) — the sequential p50 ratio toolgate would reach if the ` +
      `daemon's own work cost nothing. At concurrency ${side.concurrency} the writes alone allow ${fmtRate(f.toolgateGroupRate)} calls/s ` +
      `(${fmtRatio(f.toolgateGroupRate / anchor.rate)} the ${which}'s ${fmtRate(anchor.rate)}), and the transport and the writes together ` +
      `${fmtRate(rate)} calls/s (1 ÷ (1 ÷ echo calls/s + 1 ÷ writes calls/s) = ${fmtRatio(rate / anchor.rate)} the ${which}).`, '');
  }
  // What the targets leave for everything else a call does (validation, credential, CLI core, projection, notifications, logging).
  const p50Budget = anchor ? anchor.p50 - bound : Number.NaN;
  const rateBudget = anchor ? 1000 / (1.5 * anchor.rate) - 1000 / rate : Number.NaN;
  const leaves = (x: number, none: string) => (!Number.isFinite(x) ? 'n/a' : x > 0 ? fmtMs(x) : `nothing: ${none}`);
  const s = OWN_WORK_START;
  if (f.interleaved) L.push('The daemon\'s own work below is the median of per-round differences (entry c minus the echo and the writes of the same round).', '');
  L.push(`| the daemon's own work per call (entry c minus transport and writes) | measured | at ${s.commit} (issue 19's start) | ÷ start (target ≤ 50 %) | the anchor target leaves |`,
    '|---|---:|---:|---:|---:|');
  L.push(`| sequential (p50 ≤ 1.0× the anchor's) | ${fmtMs(own.p50)} | ${fmtMs(s.p50)} | ${fmtPct(own.p50 / s.p50)} | ${leaves(p50Budget, 'the bound is over the target')} |`);
  L.push(`| at concurrency ${side.concurrency} (calls/s ≥ 1.5× the anchor's) | ${fmtMs(own.perCall)} | ${fmtMs(s.perCall)} | ${fmtPct(own.perCall / s.perCall)} | ${leaves(rateBudget, 'the bound is under the target')} |`, '');
}

const fmtPct = (x: number): string => (Number.isFinite(x) ? `${(x * 100).toFixed(0)} %` : 'n/a');

/** Calls/s of a call that is only the transport's work and the writes' work, done one after the other on one thread. */
const boundRate = (transportRate: number, writesRate: number): number => 1 / (1 / transportRate + 1 / writesRate);
