/**
 * Ends calls nobody decided within their `ttl_s` (contract section 17) even
 * when nobody looks: a call's waiter expires it on time, and `call/get`
 * when it reads it, but a call whose asking daemon died, or whose host went
 * away, has neither. Every daemon sweeps the database every SWEEP_MS and
 * ends what expired there, `APPROVAL_EXPIRED` — stored, audited (surface
 * `ttl`), published to the thread's subscribers. Racing sweeps of several
 * daemons are safe: each end is the conditional removal of the pending row
 * (pending-calls.ts), so exactly one of them stores the failure.
 *
 * Each sweep also ends approved calls whose runner died once they are older
 * than their run could be (recovery.ts): a daemon that restarted sooner, or
 * a daemon that never restarts, leaves them to it.
 */
import type { CallKeyOf } from '../store/store.js';
import { endPending, type PendingDeps } from './pending-calls.js';
import { recoverApprovedCalls } from './recovery.js';

/** What the sweep needs: the pending calls, and the live time limits that bound an approved call's run. */
export interface SweepDeps extends PendingDeps {
  timeoutMs(action: string): number;
  cancelGraceMs: number;
}

/** How long an approved call of `action` may run at most, by the live limits: its time limit and the kill grace. */
export const runLimitOf = (deps: Pick<SweepDeps, 'timeoutMs' | 'cancelGraceMs'>) => (action: string): number => deps.timeoutMs(action) + deps.cancelGraceMs;

/** How often the database is swept: a late expiry is at most this late for a call nobody waits on. */
export const SWEEP_MS = 30_000;
/** Calls ended per sweep at most; the rest wait for the next sweep. */
const SWEEP_LIMIT = 100;

export interface SweepLog {
  log(level: 'warn' | 'info', msg: string, fields?: Record<string, unknown>): void;
}

export class ExpirySweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    private readonly deps: SweepDeps,
    private readonly log: SweepLog,
    private readonly everyMs = SWEEP_MS,
  ) {}

  /** Sweeps every `everyMs` from now on (the timer keeps no process alive). */
  start(): void {
    this.timer ??= setInterval(() => void this.sweep(), this.everyMs).unref();
  }

  /** Ends every call that expired by now (at most SWEEP_LIMIT): how many this sweep ended. One sweep at a time. */
  sweep(now = Date.now()): Promise<number> {
    this.running ??= this.sweepOnce(now).finally(() => (this.running = undefined));
    return this.running;
  }

  /** Stops sweeping; resolves once a sweep under way has ended (before the store closes). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async sweepOnce(now: number): Promise<number> {
    let ended = 0;
    let keys: CallKeyOf[];
    try {
      keys = await this.deps.store.read((tx) => tx.pendingCalls.expired(new Date(now).toISOString(), SWEEP_LIMIT));
    } catch (err) {
      // The database may be away for a moment; the next sweep tries again.
      this.log.log('warn', 'the expiry sweep failed', { err: (err as Error).message });
      return 0;
    }
    for (const key of keys) {
      // One call that cannot be ended holds up none of the others.
      try {
        if (await endPending(this.deps, key, { decision: 'expire', surface: 'ttl' })) ended += 1;
      } catch (err) {
        this.log.log('warn', 'an expired call could not be ended', { thread_id: key.threadId, tool_call_id: key.toolCallId, err: (err as Error).message });
      }
    }
    if (ended > 0) this.log.log('info', 'calls awaiting approval expired', { count: ended });
    try {
      const orphans = await recoverApprovedCalls(this.deps.store, this.log, runLimitOf(this.deps), now);
      if (orphans > 0) this.log.log('warn', 'ended approved calls whose daemon died', { count: orphans });
    } catch (err) {
      this.log.log('warn', 'the sweep of approved calls whose daemon died failed', { err: (err as Error).message });
    }
    return ended;
  }
}
