/**
 * The bench's tables, as Markdown: printed to the console and written to
 * bench/RESULTS.md. Everything above the analysis marker is regenerated on each
 * run; the hand-written analysis below it is kept.
 */
import type { Machine } from './machine.js';
import type { EntryKey, SideBySide } from './side-by-side.js';
import type { HistoryResult } from './history.js';
import type { PgEntryKey, PgResult } from './pg.js';
import type { WsResult } from './ws-load.js';
import type { StartupRow } from './startup.js';
import type { ProfileSummary } from './profile.js';
import type { FloorResult } from './floor.js';
import { fmtMb, fmtMs, fmtRate, fmtRatio } from './stats.js';

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
  profile?: ProfileSummary;
  floor?: FloorResult;
}

const LABEL: Record<EntryKey, string> = {
  echo: '(a) bare vscode-jsonrpc echo (the transport’s ceiling)',
  mcp: '(b) MCP SDK server: zod + 1 SQLite insert',
  inprocess: '(c) toolgate `--executor inprocess`',
  subprocess: '(d) toolgate `--executor subprocess`',
  node: '(e) bare `node -e 0` (one process start)',
};

interface Target {
  what: string;
  measured: number;
  goal: string;
  ok: boolean;
  fmt: (x: number) => string;
}

export function targets(r: Results): Target[] {
  const out: Target[] = [];
  for (const s of r.sideBySide) {
    out.push({ what: `in-process calls/s @${s.concurrency} ÷ MCP server (${s.synchronous})`, measured: s.ratio('inprocess', 'mcp', 'rate'), goal: '≥ 1.5×', ok: s.ratio('inprocess', 'mcp', 'rate') >= 1.5, fmt: fmtRatio });
    out.push({ what: `in-process sequential p50 ÷ MCP server (${s.synchronous})`, measured: s.ratio('inprocess', 'mcp', 'p50'), goal: '≤ 1×', ok: s.ratio('inprocess', 'mcp', 'p50') <= 1, fmt: fmtRatio });
    out.push({ what: `subprocess p50 ÷ bare node start (${s.synchronous})`, measured: s.ratio('subprocess', 'node', 'p50'), goal: '≤ 2× (stretch 1.5×)', ok: s.ratio('subprocess', 'node', 'p50') <= 2, fmt: fmtRatio });
  }
  if (r.history) {
    out.push({ what: 'history/get ui view ÷ raw SELECT (same transport)', measured: r.history.uiRatio, goal: '≤ 2×', ok: r.history.uiRatio <= 2, fmt: fmtRatio });
    out.push({ what: 'history/get context view ÷ raw SELECT (same transport)', measured: r.history.contextRatio, goal: '≤ 1.2×', ok: r.history.contextRatio <= 1.2, fmt: fmtRatio });
  }
  if (r.ws) {
    out.push({ what: 'idle RSS of the daemon', measured: r.ws.idleRss, goal: '≤ 80 MB', ok: r.ws.idleRss <= 80 * 1024 * 1024, fmt: fmtMb });
    out.push({ what: `peak RSS, ${r.ws.clients} WebSocket clients under load`, measured: r.ws.loadRss, goal: '≤ 150 MB', ok: r.ws.loadRss <= 150 * 1024 * 1024, fmt: fmtMb });
  }
  return out;
}

export function render(r: Results): string {
  const L: string[] = [];
  const m = r.machine;
  L.push('# toolgate bench results', '');
  L.push(`Written by \`npm run bench\` (bench/run.ts) on ${m.date}, commit \`${r.commit}\`, in ${r.seconds.toFixed(0)} s.`, '');
  L.push(`Machine: ${m.cpu}, ${m.cores} cores, ${m.memory} memory, Node ${m.node}; load average at the start ${m.load}.`);
  L.push('Shared machine: ratios are medians of per-round ratios of interleaved rounds; absolute times are only indicative.', '');

  for (const s of r.sideBySide) {
    const e = s.entries;
    L.push(`## Side by side: \`calendar.create\` over stdio, \`synchronous=${s.synchronous}\``, '');
    L.push(`${s.rounds} interleaved rounds; per round and entry: sequential calls, then calls at concurrency ${s.concurrency} ` +
      `(${e.echo.seqPerRound}+${e.echo.concPerRound} for a–c, ${e.node.seqPerRound}+${e.node.concPerRound} for d–e). ` +
      'p50 = median of the round p50s; p99 pooled over the rounds. toolgate is configured with `store.synchronous` = ' +
      `${s.synchronous}; a build that does not apply that key yet runs its store at its own default.`, '');
    L.push(`| entry | p50 | p99 | calls/s @${s.concurrency} | p99 @${s.concurrency} | p50 ÷ echo | calls/s ÷ echo | p50 ÷ MCP | calls/s ÷ MCP | peak RSS |`);
    L.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const k of ['echo', 'mcp', 'inprocess', 'subprocess', 'node'] as EntryKey[]) {
      const x = e[k];
      L.push(`| ${LABEL[k]} | ${fmtMs(x.p50)} | ${fmtMs(x.p99)} | ${fmtRate(x.rate)} | ${fmtMs(x.concP99)} | ${fmtRatio(s.ratio(k, 'echo', 'p50'))} | ${fmtRatio(s.ratio(k, 'echo', 'rate'))} | ${fmtRatio(s.ratio(k, 'mcp', 'p50'))} | ${fmtRatio(s.ratio(k, 'mcp', 'rate'))} | ${x.peakRss ? fmtMb(x.peakRss) : '—'} |`);
    }
    L.push('');
  }

  if (r.floor) renderFloor(L, r.floor, r.sideBySide.find((s) => s.synchronous === r.floor!.synchronous));
  if (r.pg) renderPg(L, r.pg);

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

  L.push('## Targets of issue 8', '');
  L.push('| target | measured | goal | met? |', '|---|---:|---|---|');
  for (const t of targets(r)) L.push(`| ${t.what} | ${t.fmt(t.measured)} | ${t.goal} | ${t.ok ? 'yes' : `**no** (${missBy(t)})`} |`);
  L.push('');
  return L.join('\n');
}

function missBy(t: Target): string {
  if (t.goal.startsWith('≥')) return `${((1 - t.measured / 1.5) * 100).toFixed(0)} % short`;
  const limit = t.fmt === fmtMb ? Number(/\d+/.exec(t.goal)![0]) * 1024 * 1024 : Number(/[\d.]+/.exec(t.goal)![0]);
  return `${t.fmt === fmtMb ? fmtMb(t.measured - limit) : fmtRatio(t.measured / limit)} over`;
}

const PG_LABEL: Record<PgEntryKey, string> = {
  sqlite: 'toolgate `--executor inprocess`, SQLite (the reference)',
  pg1: 'PostgreSQL, one daemon',
  pg2: 'PostgreSQL, two daemons on one database (calls alternate)',
};

function renderPg(L: string[], p: PgResult): void {
  L.push('## PostgreSQL: one daemon, two daemons on one database', '');
  if (p.skipped || !p.entries || !p.ratio || !p.server) {
    L.push(p.skipped ?? 'PostgreSQL rows skipped.', '');
    return;
  }
  const s = p.server;
  L.push(`\`calendar.create\` over stdio, \`--executor inprocess\`, \`store.synchronous\` = ${p.synchronous} for SQLite; PostgreSQL ${s.version} ` +
    `(fsync ${s.fsync}, synchronous_commit ${s.synchronousCommit}) on this machine over TCP loopback, ${s.source}, pool of 10 per daemon. ` +
    `${p.rounds} interleaved rounds; per round and entry ${p.seqPerRound} sequential calls, then ${p.concPerRound} at concurrency ${p.concurrency}; ` +
    'calls spread over 8 threads (call i → thread i mod 8) for every entry; ratios are medians of per-round ratios to the SQLite row.', '');
  L.push(`| entry | p50 | calls/s @${p.concurrency} | p50 ÷ SQLite | calls/s ÷ SQLite |`, '|---|---:|---:|---:|---:|');
  for (const k of ['sqlite', 'pg1', 'pg2'] as PgEntryKey[]) {
    const e = p.entries[k];
    L.push(`| ${PG_LABEL[k]} | ${fmtMs(e.p50)} | ${fmtRate(e.rate)} | ${fmtRatio(p.ratio(k, 'p50'))} | ${fmtRatio(p.ratio(k, 'rate'))} |`);
  }
  L.push('');
}

function renderFloor(L: string[], f: FloorResult, side: SideBySide | undefined): void {
  L.push(`## The floor: the SQLite writes alone, \`synchronous=${f.synchronous}\``, '');
  L.push('Each entry\'s statements and commit in the bench process — no transport, no validation, no projection: toolgate\'s rows of one real ' +
    'in-process `calendar.create` (audit row, event, call record, thread bump, tool message), and the MCP anchor\'s one insert. ' +
    `${f.rounds} interleaved rounds, medians. One toolgate call alone appends ${f.framesPerCall} WAL frames.`, '');
  L.push('| writes | per transaction (p50) | calls/s |', '|---|---:|---:|');
  L.push(`| toolgate, one call per transaction | ${fmtMs(f.toolgateP50)} | ${fmtRate(1000 / f.toolgateP50)} |`);
  L.push(`| toolgate, ${f.groupSize} calls per transaction (group commit) | — | ${fmtRate(f.toolgateGroupRate)} |`);
  L.push(`| MCP anchor, one insert per transaction | ${fmtMs(f.mcpP50)} | ${fmtRate(1000 / f.mcpP50)} |`, '');
  if (side) {
    const e = side.entries;
    const bound = e.echo.p50 + f.toolgateP50;
    const rate = boundRate(e.echo.rate, f.toolgateGroupRate);
    // What the targets leave for everything else a call does (validation, credential, CLI core, projection, notifications, logging).
    const p50Budget = e.mcp.p50 - bound;
    const rateBudget = 1000 / (1.5 * e.mcp.rate) - 1000 / rate;
    const own = { p50: e.inprocess.p50 - bound, perCall: 1000 / e.inprocess.rate - 1000 / rate };
    L.push(`No in-process call can be faster than the transport plus its writes: echo p50 + toolgate's writes = ${fmtMs(bound)}, ` +
      `${fmtRatio(bound / e.mcp.p50)} the MCP server's whole p50 (${fmtMs(e.mcp.p50)}) — the sequential p50 ÷ MCP toolgate would reach if the ` +
      `daemon's own work cost nothing. At concurrency ${side.concurrency} the writes alone allow ${fmtRate(f.toolgateGroupRate)} calls/s ` +
      `(${fmtRatio(f.toolgateGroupRate / e.mcp.rate)} the MCP server's ${fmtRate(e.mcp.rate)}), and the transport and the writes together ` +
      `${fmtRate(rate)} calls/s (1 ÷ (1 ÷ echo calls/s + 1 ÷ writes calls/s) = ${fmtRatio(rate / e.mcp.rate)} the MCP server).`, '');
    L.push('| the daemon\'s own work per call (entry c minus transport and writes) | measured | the target leaves |', '|---|---:|---:|');
    L.push(`| sequential (p50 ≤ the MCP server's) | ${fmtMs(own.p50)} | ${p50Budget > 0 ? fmtMs(p50Budget) : 'nothing: the bound is over the target'} |`);
    L.push(`| at concurrency ${side.concurrency} (calls/s ≥ 1.5× the MCP server's) | ${fmtMs(own.perCall)} | ${rateBudget > 0 ? fmtMs(rateBudget) : 'nothing: the bound is under the target'} |`, '');
  }
}

/** Calls/s of a call that is only the transport's work and the writes' work, done one after the other on one thread. */
const boundRate = (transportRate: number, writesRate: number): number => 1 / (1 / transportRate + 1 / writesRate);
