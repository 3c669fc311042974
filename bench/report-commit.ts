/** The commit section of the bench's report: does the SQLite COMMIT block the event loop, and what would moving it win. */
import type { CommitBlockResult, CommitBlockRow } from './commit-block.js';
import { fmtMs, fmtRate, fmtRatio } from './stats.js';

const pct = (x: number): string => (Number.isFinite(x) ? `${(x * 100).toFixed(0)} %` : 'n/a');

export function renderCommitBlock(L: string[], c: CommitBlockResult): void {
  L.push('## Does the SQLite COMMIT block the event loop?', '');
  L.push('Two in-process daemons (`synchronous=FULL` and `NORMAL`; in WAL mode NORMAL does no fsync at commit), each with ' +
    'bench/commit-probe.ts preloaded (`node --import`): it times every `COMMIT` on the main thread (wall, and the process\'s CPU ' +
    'during it — the rest is waiting for the disk, or for a core on a loaded machine), every other statement, the event loop\'s utilization (ELU) and an event-loop ' +
    `delay histogram (\`monitorEventLoopDelay\`, 1 ms resolution). ${c.rounds} interleaved rounds; per round and daemon ${c.seq} ` +
    `sequential calls, then ${c.conc} at concurrency ${c.concurrency}; medians over rounds. "Per call" figures are totals ÷ calls.`, '');
  L.push('| daemon, load | calls/s | p50 | calls per COMMIT | COMMIT p50 | COMMIT p99 | CPU in a COMMIT (p50) | COMMIT per call | of it not on a CPU | other statements per call | loop busy per call | process CPU per call | main thread inside COMMIT | ELU | loop delay p50 / p99 / max |');
  L.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of c.rows) {
    const load = r.load === 'seq' ? 'sequential' : `concurrency ${c.concurrency}`;
    L.push(`| ${r.synchronous}, ${load} | ${fmtRate(r.rate)} | ${fmtMs(r.p50)} | ${r.callsPerCommit.toFixed(1)} | ${fmtMs(r.commitP50)} | ${fmtMs(r.commitP99)} | ` +
      `${fmtMs(r.commitCpuP50)} | ${fmtMs(r.commitPerCall)} | ${fmtMs(r.commitWaitPerCall)} | ${fmtMs(r.otherStatementsPerCall)} | ${fmtMs(r.busyPerCall)} | ${fmtMs(r.cpuPerCall)} | ` +
      `${pct(r.commitShare)} | ${pct(r.elu)} | ${fmtMs(r.loopDelayP50)} / ${fmtMs(r.loopDelayP99)} / ${fmtMs(r.loopDelayMax)} |`);
  }
  L.push('');
  const row = (s: 'FULL' | 'NORMAL', l: 'seq' | 'conc') => c.rows.find((r) => r.synchronous === s && r.load === l);
  const fullConc = row('FULL', 'conc');
  const normalConc = row('NORMAL', 'conc');
  const fullSeq = row('FULL', 'seq');
  if (!fullConc || !normalConc || !fullSeq) return;
  L.push(...implications(c.concurrency, fullConc, normalConc, fullSeq, c.normalOverFull), '');
}

/** What the figures say a worker-owned connection, or overlapping the next group's work with the commit, could win. */
function implications(conc: number, full: CommitBlockRow, normal: CommitBlockRow, seq: CommitBlockRow, normalOverFull: number): string[] {
  // The main thread's own accounting: its time per call if the COMMIT's off-CPU wait (or the whole COMMIT) cost it nothing.
  const byWait = full.busyPerCall / Math.max(1e-9, full.busyPerCall - full.commitWaitPerCall);
  const byWhole = full.busyPerCall / Math.max(1e-9, full.busyPerCall - full.commitPerCall);
  return [
    `At concurrency ${conc}, \`synchronous=FULL\`: the main thread is inside \`COMMIT\` for ${pct(full.commitShare)} of the burst's wall ` +
      `time (${fmtMs(full.commitP50)} a COMMIT, ${full.callsPerCommit.toFixed(1)} calls a COMMIT, ${fmtMs(full.commitPerCall)} a call), and ` +
      `${fmtMs(full.commitWaitPerCall)} of each call's share is not on a CPU — the thread waits for the fsync (or a core) and runs nothing else. ` +
      `The loop is busy ${pct(full.elu)} of the time (${fmtMs(full.busyPerCall)} a call); event-loop delay p99 ${fmtMs(full.loopDelayP99)} ` +
      `at FULL against ${fmtMs(normal.loopDelayP99)} at NORMAL (COMMIT p50 ${fmtMs(normal.commitP50)} there).`,
    '',
    `- *A worker owning the connection, or the next group's work overlapped with the current COMMIT:* by the main thread's own ` +
      `accounting, with the COMMIT's off-CPU wait taken off it at no cost a call would cost it ${fmtMs(full.busyPerCall - full.commitWaitPerCall)} ` +
      `instead of ${fmtMs(full.busyPerCall)}: ${fmtRatio(byWait)} the calls/s at concurrency ${conc} (${fmtRatio(byWhole)} with the COMMIT's CPU ` +
      `moved too, which needs a free core), while the main thread is the bottleneck (ELU ${pct(full.elu)}). The NORMAL daemon, which has no ` +
      `fsync at all, measured ${fmtRatio(normalOverFull)} FULL's calls/s (median of per-round ratios): the measured ceiling of any such ` +
      `change, before the cost of the thread hop. Where it exceeds the accounting, NORMAL also saved CPU outside the COMMIT (process CPU ` +
      `per call ${fmtMs(full.cpuPerCall)} at FULL, ${fmtMs(normal.cpuPerCall)} at NORMAL: the fsync's kernel work, and a loaded disk's contention).`,
    `- *Sequential:* a call's answer waits for its own COMMIT whoever runs it (${fmtMs(seq.commitP50)} of the ${fmtMs(seq.p50)} p50 at FULL); ` +
      'nothing else is in flight to overlap with, so a worker can only add its hop there.',
  ];
}
