/**
 * Runs every check against one implementation and writes the report: one
 * line per check (`ok`, `FAIL` with its reason indented below, or `skip`),
 * then `N passed, M failed` as the last line.
 */
import { ConformanceClient } from './client.js';
import { CheckFailure, Skip } from './check.js';
import { CHECKS, newRunIds, type Context } from './checks.js';
import type { RawTransport } from './transport.js';
import { WireValidator } from './wire-validator.js';

/** The check that ends connection A on purpose; before it, a closed connection stops the run. */
const SHUTDOWN_CHECK = CHECKS.findIndex((c) => c.name.startsWith('shutdown:'));

export interface RunOptions {
  /** Opens a connection; called once for stdio, and again for extra connections on WebSocket. */
  open: () => Promise<RawTransport>;
  multiConnection: boolean;
  tokenA: string;
  tokenB?: string | undefined;
  /** The HS256 bearer secret, when the runner may mint its own tokens (no exp, expired, with a phone). */
  secret?: string | undefined;
  /** A narrower agent profile of the implementation, for the ACTION_NOT_ALLOWED check. */
  agent?: string | undefined;
  /** An agent profile whose `approval.ask` includes `memory.forget`, for the approval checks. */
  askAgent?: string | undefined;
  timeoutMs?: number;
  /** How long to wait for a notification on another connection (or to be sure none comes). */
  settleMs?: number;
  schemasDir?: string;
  /**
   * A validator to use instead of one built from `schemasDir`. It compiles each shape once and keeps
   * it, so a caller that runs the suite many times in one process (the mutation suite) can share one.
   */
  validator?: WireValidator;
  write: (line: string) => void;
}

export interface RunReport {
  passed: number;
  failed: number;
  skipped: number;
}

export async function runConformance(opts: RunOptions): Promise<RunReport> {
  const validator = opts.validator ?? new WireValidator(opts.schemasDir);
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const clients: ConformanceClient[] = [];
  const labels = 'ABCDEFGH';
  const open = async () => {
    const c = new ConformanceClient(await opts.open(), validator, timeoutMs, `connection ${labels[clients.length] ?? clients.length}`);
    clients.push(c);
    return c;
  };
  const report: RunReport = { passed: 0, failed: 0, skipped: 0 };
  let a: ConformanceClient;
  try {
    a = await open();
  } catch (err) {
    opts.write(`FAIL connect: ${(err as Error).message}`);
    opts.write('0 passed, 1 failed');
    return { passed: 0, failed: 1, skipped: 0 };
  }
  opts.write(`toolgate conformance: ${a.transport.description}`);
  const ctx: Context = {
    a,
    connect: opts.multiConnection ? open : null,
    clients,
    tokenA: opts.tokenA,
    tokenB: opts.tokenB,
    secret: opts.secret,
    agent: opts.agent,
    askAgent: opts.askAgent,
    waitMs: timeoutMs,
    validator,
    settleMs: opts.settleMs ?? 300,
    ...newRunIds(),
  };
  try {
    for (const [i, check] of CHECKS.entries()) {
      const n = String(i + 1).padStart(2);
      try {
        await check.run(ctx);
        report.passed++;
        opts.write(`ok   ${n} ${check.name} [${check.section}]`);
      } catch (err) {
        if (err instanceof Skip) {
          report.skipped++;
          opts.write(`skip ${n} ${check.name} [${check.section}] (${err.message})`);
          continue;
        }
        report.failed++;
        opts.write(`FAIL ${n} ${check.name} [${check.section}]`);
        // The implementation went away before the shutdown check asked it to: every later check
        // would fail for the same reason, so the reason is said once and the run stops.
        const gone = i < SHUTDOWN_CHECK ? a.closedReason() : undefined;
        if (gone !== undefined) {
          const left = CHECKS.length - i - 1;
          report.failed += left;
          opts.write(`        the connection is gone: ${gone}`);
          if (left > 0) opts.write(`stopped: the other ${left} checks cannot run without it (counted as failed)`);
          break;
        }
        const reason = err instanceof CheckFailure ? err.message : `the check crashed: ${(err as Error).stack ?? String(err)}`;
        for (const line of reason.split('\n')) opts.write(`        ${line}`);
      }
    }
  } finally {
    await Promise.all(clients.map((c) => c.transport.close().catch(() => {})));
  }
  if (report.skipped > 0) opts.write(`${report.skipped} skipped`);
  opts.write(`${report.passed} passed, ${report.failed} failed`);
  return report;
}
