/**
 * The calls this daemon is running now, by `(user, thread, tool_call_id)`:
 * each with the AbortController its executor and unit of work listen to
 * (contract §16). `call/cancel`, `$/cancelRequest`, MCP
 * `notifications/cancelled`, a call's time limit and shutdown all stop a
 * call through here, and `call/get` reads a running call's state here before
 * the store has its outcome.
 */
import { CallStopped } from './call-stopped.js';
import { isoOfMs } from '../store/iso-time.js';

/**
 * PostgreSQL: a call still running this long is shared with the other daemons (tool-invoke.ts,
 * shareRunning); a quicker one costs no round trip. Until then only its own daemon knows it runs.
 */
export const SHARE_AFTER_MS = 100;

/**
 * How long a daemon that finds no trace of a call on PostgreSQL waits, once, before it answers
 * CALL_NOT_FOUND: a call another daemon began less than SHARE_AFTER_MS ago is shared (or done) by then.
 */
export const SHARE_SETTLE_MS = SHARE_AFTER_MS + 150;

export interface CallKey {
  userId: string;
  threadId: string;
  toolCallId: string;
}

export interface RunningCall extends CallKey {
  action: string;
  argsSha256: string;
  /** When the call began to run (ISO-8601 UTC). */
  createdAt: string;
  readonly signal: AbortSignal;
  /** Stops the call (the first stop wins); its work ends and it is stored as failed with the stop's code. */
  stop(reason: CallStopped): void;
  /** Settles once the call has its stored outcome (or failed to get one). */
  readonly ended: Promise<void>;
  /**
   * Past its quotas (or counted by none): from here on it is a call that runs, or awaits approval, with
   * these args — not yet a refusal in the making (a full quota answers RATE_LIMITED and stores nothing).
   */
  readonly pastQuotas: boolean;
  passQuotas(): void;
}

/**
 * A running call. What only some calls need is made on first use: the ISO
 * time (call/get of a running call, sharing it on PostgreSQL) and the
 * `ended` promise (a cancel or shutdown that waits for it) — a call that
 * just runs and ends pays for neither.
 */
class Entry implements RunningCall {
  readonly userId: string;
  readonly threadId: string;
  readonly toolCallId: string;
  readonly action: string;
  readonly argsSha256: string;
  readonly controller = new AbortController();
  timer: NodeJS.Timeout | undefined;
  private readonly startedMs = Date.now();
  private createdIso: string | undefined;
  private endedPromise: Promise<void> | undefined;
  private resolveEnded: (() => void) | undefined;
  private isEnded = false;
  pastQuotas = false;

  constructor(call: CallKey & { action: string; argsSha256: string }, private readonly onStop: ((reason: CallStopped) => void) | undefined) {
    this.userId = call.userId;
    this.threadId = call.threadId;
    this.toolCallId = call.toolCallId;
    this.action = call.action;
    this.argsSha256 = call.argsSha256;
  }

  get createdAt(): string {
    return (this.createdIso ??= isoOfMs(this.startedMs));
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get ended(): Promise<void> {
    return (this.endedPromise ??= this.isEnded ? Promise.resolve() : new Promise<void>((r) => (this.resolveEnded = r)));
  }

  passQuotas(): void {
    this.pastQuotas = true;
  }

  stop(reason: CallStopped): void {
    if (this.controller.signal.aborted) return;
    // Told before the signal's listeners run (they undo the call's unit).
    this.onStop?.(reason);
    this.controller.abort(reason);
  }

  end(): void {
    this.isEnded = true;
    this.resolveEnded?.();
  }
}

/** A call `RunningCalls.start` registered: `finish` ends it; `arm` sets (or sets again) its time limit from now. */
export interface StartedCall {
  running: RunningCall;
  finish: () => void;
  arm: (timeoutMs: number) => void;
}

/** Unambiguous without serializing: each part but the last is prefixed with its length. */
const keyOf = (k: CallKey): string => `${k.userId.length}:${k.userId}${k.threadId.length}:${k.threadId}${k.toolCallId}`;

export class RunningCalls {
  /** A call id may be asked for twice at once (a retry racing its first try): the later run waits for the earlier (`earlierEnded`), and a cancel stops both. */
  private readonly calls = new Map<string, Set<Entry>>();

  /**
   * Registers a call as running from now; `timeoutMs` is its time limit
   * (TIMEOUT past it), or undefined for one that `arm` sets later (an
   * approved call is registered before its approval commits, and its time
   * counts from the commit). `onStop` is told of its first stop, whoever
   * stops it. The returned `finish` ends it (after its outcome is stored).
   */
  start(call: CallKey & { action: string; argsSha256: string }, timeoutMs: number | undefined, onStop?: (reason: CallStopped) => void): StartedCall {
    const entry = new Entry(call, onStop);
    const arm = (ms: number) => {
      clearTimeout(entry.timer);
      entry.timer = setTimeout(() => entry.stop(CallStopped.timedOut(ms)), ms);
    };
    if (timeoutMs !== undefined) arm(timeoutMs);
    const k = keyOf(call);
    let set = this.calls.get(k);
    if (!set) this.calls.set(k, (set = new Set()));
    set.add(entry);
    const finish = () => {
      clearTimeout(entry.timer);
      set.delete(entry);
      if (set.size === 0 && this.calls.get(k) === set) this.calls.delete(k);
      entry.end();
    };
    return { running: entry, finish, arm };
  }

  /** The call running now under this key, if any. */
  find(key: CallKey): RunningCall | undefined {
    const set = this.calls.get(keyOf(key));
    return set ? set.values().next().value : undefined;
  }

  /** The user's calls running now (one run of each). */
  ofUser(userId: string): RunningCall[] {
    const out: RunningCall[] = [];
    for (const set of this.calls.values()) {
      const run: RunningCall | undefined = set.values().next().value;
      if (run && run.userId === userId) out.push(run);
    }
    return out;
  }

  /**
   * Stops every run of this call — only those of these args when `argsSha256`
   * is given (a request's own cancel: another call that reuses the id with
   * other args is not this one) — and returns them.
   */
  stop(key: CallKey, reason: CallStopped, argsSha256?: string): RunningCall[] {
    const set = this.calls.get(keyOf(key));
    if (!set) return [];
    const runs = [...set].filter((run) => argsSha256 === undefined || run.argsSha256 === argsSha256);
    for (const run of runs) run.stop(reason);
    return runs;
  }

  /**
   * Settles once every run under this key that started before `run` has
   * ended (its outcome stored, or failed to be): tool-invoke.ts runs a key's
   * runs one after the other. Runs wait only for earlier ones, so none waits
   * for itself.
   */
  async earlierEnded(run: RunningCall): Promise<void> {
    const set = this.calls.get(keyOf(run));
    if (!set) return;
    const earlier: Promise<void>[] = [];
    for (const other of set) {
      if (other === run) break;
      earlier.push(other.ended);
    }
    await Promise.all(earlier);
  }

  /** Whether a run under this key with the same args as `run` started before it (a retry racing its first try). */
  hasEarlierTwin(run: RunningCall): boolean {
    const set = this.calls.get(keyOf(run));
    if (!set) return false;
    for (const other of set) {
      if (other === run) return false;
      if (other.argsSha256 === run.argsSha256) return true;
    }
    return false;
  }

  /** Stops every running call (shutdown past its grace); resolves once each has its outcome stored. */
  async stopAll(reason: CallStopped): Promise<void> {
    const runs = [...this.calls.values()].flatMap((s) => [...s]);
    for (const run of runs) run.stop(reason);
    await Promise.allSettled(runs.map((r) => r.ended));
  }

  get size(): number {
    let n = 0;
    for (const s of this.calls.values()) n += s.size;
    return n;
  }
}
