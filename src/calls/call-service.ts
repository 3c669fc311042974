/**
 * A call's lifecycle as its user sees it from any connection (contract §16):
 * `call/get` reads its state, `call/cancel` stops it. A call is running in
 * this daemon (RunningCalls) until its outcome is stored; from then on the
 * store holds it `done` — its tool message, the very response `tool/invoke`
 * gave. Another user's call and a call that never existed get the same
 * answer, CALL_NOT_FOUND.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { argsSha256 } from '../codec/canonical-json.js';
import type { ToolResponse } from '../protocol/tool.js';
import type { CallCancelResult, CallGetResult } from '../protocol/methods.js';
import { StoreUnavailableError, type MessageRow, type Store } from '../store/store.js';
import { DaemonError } from '../runtime/errors.js';
import { outputOf } from '../threads/message-views.js';
import { CallStopped } from './call-stopped.js';
import { SHARE_SETTLE_MS, type CallKey, type RunningCalls } from './running-calls.js';
import { endPending, isExpired, pendingCallView, type PendingDeps } from './pending-calls.js';

export interface CallServiceDeps extends PendingDeps {
  store: Store;
  calls: RunningCalls;
  /** How long a stopped child may take to die (SIGTERM, then SIGKILL): a cancel sent to another daemon waits for it. */
  cancelGraceMs: number;
}

/** A cancel sent to another daemon: how long to wait for the call's outcome to be stored, past the kill grace. */
const REMOTE_CANCEL_MARGIN_MS = 10_000;

export function callNotFound(): DaemonError {
  return new DaemonError('CALL_NOT_FOUND', 'call not found');
}

/**
 * Whether a daemon that found no trace of the call should look once more before answering CALL_NOT_FOUND:
 * on PostgreSQL, after waiting SHARE_SETTLE_MS — a call another daemon began a moment ago is recorded
 * only once it has run SHARE_AFTER_MS (until then no other daemon can know it runs).
 */
export async function settledAgain(deps: Pick<CallServiceDeps, 'store'>, again: boolean): Promise<boolean> {
  if (!again || !deps.store.sharedCalls) return false;
  await sleep(SHARE_SETTLE_MS);
  return true;
}

/** `call/get`: the call's state — running here, else as stored. */
export async function getCall(deps: CallServiceDeps, key: CallKey, again = true): Promise<CallGetResult> {
  // Stored first: a call is done from its commit on, though its run here ends a moment later.
  const stored = await storedCall(deps.store, key);
  if (stored) return stored;
  // Awaiting approval, or approved and running (contract section 17); expired ones end now. Read even while a
  // run of the id is registered here: a retry of a call awaiting approval is, while it is counted.
  const pending = await deps.store.read((tx) => tx.pendingCalls.get(key));
  if (pending && isExpired(pending)) {
    await endPending(deps, key, { decision: 'expire', surface: 'ttl' });
    const ended = await storedCall(deps.store, key);
    if (ended) return ended;
  } else if (pending?.state === 'awaiting_approval') {
    return pendingCallView(pending);
  }
  const running = deps.calls.find(key);
  if (running) {
    return {
      thread_id: key.threadId,
      tool_call_id: key.toolCallId,
      action: running.action,
      args_sha256: running.argsSha256,
      state: 'running',
      created_at: running.createdAt,
      updated_at: running.createdAt,
    };
  }
  // PostgreSQL: another daemon may be running it.
  const elsewhere = await deps.store.sharedCalls?.find(key);
  if (elsewhere) {
    // It may have finished between the two reads: its stored outcome then wins.
    const finished = await storedCall(deps.store, key);
    if (finished) return finished;
    return {
      thread_id: key.threadId,
      tool_call_id: key.toolCallId,
      action: elsewhere.action,
      args_sha256: elsewhere.argsSha256,
      state: 'running',
      created_at: elsewhere.createdAt,
      updated_at: elsewhere.createdAt,
    };
  }
  // Approved and running where this daemon cannot see it: another process on the SQLite file, or a
  // PostgreSQL daemon before its mark is recorded. Its row says so until its outcome is stored.
  if (pending?.state === 'running') return (await storedCall(deps.store, key)) ?? pendingCallView(pending);
  // PostgreSQL: a call another daemon ran may have ended between the first read and the look at `calls` (its
  // outcome is stored before its row there goes).
  const late = deps.store.sharedCalls ? await storedCall(deps.store, key) : undefined;
  if (late) return late;
  if (await settledAgain(deps, again)) return getCall(deps, key, false);
  throw callNotFound();
}

/**
 * How long an approved call may go without its daemon's mark (PostgreSQL): the approving daemon takes it right
 * after the approval commits, on a pooled connection (a new one, at worst). Clocks of daemons may differ a little.
 */
const UNMARKED_APPROVAL_MS = 5_000;

/**
 * `call/cancel`: stops the call if it runs here and answers once its outcome
 * is stored — CANCELLED, or its real outcome when its writes had committed
 * first. A call already done is answered as it is: nothing changes.
 * `surface` is where the cancel came from (`stdio`, `ws`, `mcp`), audited
 * when it ends a call awaiting approval. `argsSha256`: only the runs of
 * these args stop (a request's own cancel: a call reusing its id with other
 * args is another call).
 */
export async function cancelCall(deps: CallServiceDeps, key: CallKey, surface: string, argsSha256?: string, again = true): Promise<CallCancelResult> {
  const stop = () => deps.calls.stop(key, CallStopped.cancelled(), argsSha256);
  let runs = stop();
  // Awaiting approval: it ends CANCELLED without running (a decision that came first stands) — also when a
  // retry of it is registered here while it is counted (stopped above).
  // Read first: a cancel of a call that is not pending writes nothing (and never waits for a write lock).
  let pending = await deps.store.read((tx) => tx.pendingCalls.get(key));
  if (pending?.state === 'awaiting_approval' && !(await endPending(deps, key, { decision: 'cancel', surface }))) {
    // An approval came first, after the reads above: its run is registered by now if this daemon approved it
    // (stopped here), and on PostgreSQL the row says `running` for another daemon's (asked to stop below).
    runs = [...new Set([...runs, ...stop()])];
    pending = await deps.store.read((tx) => tx.pendingCalls.get(key));
  }
  if (runs.length > 0) await Promise.all(runs.map((r) => r.ended));
  let done = await storedCall(deps.store, key);
  // PostgreSQL: shared as running on another daemon — or approved there a moment ago, its mark not taken yet (the
  // approving daemon registered the run before the approval committed, so the request reaches it all the same).
  // An approved row older than that with no mark is a run no daemon holds (its daemon died): nothing to wait for.
  const justApproved = pending?.state === 'running' && Date.now() - Date.parse(pending.updatedAt) < UNMARKED_APPROVAL_MS;
  if (!done && runs.length === 0 && deps.store.sharedCalls && (justApproved || (await deps.store.sharedCalls.find(key)))) {
    // Running on another daemon (PostgreSQL): it hears the request on its LISTEN connection and stops the call.
    const shared = deps.store.sharedCalls;
    // Sent again on every look: a daemon whose LISTEN connection was reconnecting missed the first.
    done = await outcomeWithin(deps.store, key, deps.cancelGraceMs + REMOTE_CANCEL_MARGIN_MS, () => shared.requestCancel(key));
    if (!done) return { state: 'running' };
  }
  if (!done) {
    // Stopped, but its outcome could not be stored (the database went away): nothing of it stands; a retry is safe.
    if (runs.length > 0) throw new StoreUnavailableError('the cancelled call could not be stored');
    // Approved and running in another process on the SQLite file, which nothing here can reach: it runs on.
    if ((await deps.store.read((tx) => tx.pendingCalls.get(key)))?.state === 'running') return { state: 'running' };
    // PostgreSQL: it ended on another daemon between the first read and the look at `calls` (its outcome is
    // stored before its row there goes).
    if (deps.store.sharedCalls) done = await storedCall(deps.store, key);
    if (!done && runs.length === 0 && (await settledAgain(deps, again))) return cancelCall(deps, key, surface, argsSha256, false);
    if (!done) throw callNotFound();
  }
  return { state: done.state, ...(done.outcome ? { outcome: done.outcome } : {}) };
}

/**
 * Whether `getCall` of this key answers from every daemon now: its outcome is
 * stored, or it is running and — on PostgreSQL — recorded in the shared
 * `calls` table (a call is shared there only once it has run a moment).
 * With `argsSha256`, whether that call is the one of these args.
 */
export async function callVisible(deps: CallServiceDeps, key: CallKey, argsSha256?: string): Promise<boolean> {
  // Given the args' digest, only the call of these args counts: a call stored (or pending, or running) under the
  // id with other args is another call, and this one ends DUPLICATE_TOOL_CALL_ID without being stored.
  const same = (digest: string) => argsSha256 === undefined || digest === argsSha256;
  const stored = await storedCall(deps.store, key);
  if (stored) return same(stored.args_sha256);
  // Awaiting approval (or approved and running): stored in `calls`, so every daemon reads it.
  const pending = await deps.store.read((tx) => tx.pendingCalls.get(key));
  if (pending) return same(pending.argsSha256);
  if (deps.store.sharedCalls) {
    const shared = await deps.store.sharedCalls.find(key);
    return shared !== undefined && same(shared.argsSha256);
  }
  // Running here once past its quotas: a call a full quota refuses is never stored, so it is never a task.
  const running = deps.calls.find(key);
  return running !== undefined && running.pastQuotas && same(running.argsSha256);
}

/**
 * The call once it is `done`, waiting while it runs (here: until its run
 * ends; on another daemon: reading again, backing off from 20 ms to 500 ms)
 * or until `signal` aborts (undefined then). CALL_NOT_FOUND for none of
 * this user's.
 */
export async function awaitCallDone(deps: CallServiceDeps, key: CallKey, signal: AbortSignal): Promise<CallGetResult | undefined> {
  for (let wait = 20; !signal.aborted; wait = Math.min(wait * 2, 500)) {
    const call = await getCall(deps, key);
    if (call.state === 'done') return call;
    const here = deps.calls.find(key);
    await new Promise<void>((resolve) => {
      const timer = here ? undefined : setTimeout(done, wait);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
      void here?.ended.then(done);
    });
  }
  return undefined;
}

/** A page of a user's calls; `next` (the last stored one's `[created_at, id]`) asks for the following page. */
export interface CallPage {
  calls: CallGetResult[];
  next: [string, string] | null;
}

/** Calls awaiting approval a first page of `listCalls` holds at most (most recently asked first); `call/list` pages them all. */
const LISTED_AWAITING = 100;

/**
 * The user's calls, newest first: on the first page those running now (here,
 * and on PostgreSQL on any live daemon) and those awaiting approval (at most
 * LISTED_AWAITING), then the done ones from the store, `limit` at a time.
 */
export async function listCalls(deps: CallServiceDeps, userId: string, after: readonly [string, string] | undefined, limit: number): Promise<CallPage> {
  const rows = await deps.store.read((tx) => tx.messages.toolMessages(userId, after, limit + 1));
  const more = rows.length > limit;
  if (more) rows.length = limit;
  const done = rows.map((row) => doneCall({ userId, threadId: row.thread_id, toolCallId: row.tool_call_id ?? '' }, row));
  const seen = new Set(done.map((c) => JSON.stringify([c.thread_id, c.tool_call_id])));
  const running: CallGetResult[] = [];
  if (!after) {
    const asked = await deps.store.read((tx) => tx.pendingCalls.awaiting(userId, new Date().toISOString(), null, LISTED_AWAITING));
    const shared = (await deps.store.sharedCalls?.ofUser(userId)) ?? [];
    // A call awaiting approval is listed so, as call/get answers it, though a run of it may be registered here
    // (a retry while it is counted; an approval in flight, registered before it commits).
    const awaiting = new Set(asked.map((row) => JSON.stringify([row.threadId, row.toolCallId])));
    for (const r of [...deps.calls.ofUser(userId), ...shared]) {
      const k = JSON.stringify([r.threadId, r.toolCallId]);
      if (seen.has(k) || awaiting.has(k)) continue;
      seen.add(k);
      running.push({
        thread_id: r.threadId,
        tool_call_id: r.toolCallId,
        action: r.action,
        args_sha256: r.argsSha256,
        state: 'running',
        created_at: r.createdAt,
        updated_at: r.createdAt,
      });
    }
    // Awaiting approval: stored in `calls`, on no daemon's list of running calls.
    for (const row of asked) {
      const k = JSON.stringify([row.threadId, row.toolCallId]);
      if (seen.has(k)) continue;
      seen.add(k);
      running.push(pendingCallView(row));
    }
  }
  const last = rows.at(-1);
  return { calls: [...running, ...done], next: more && last ? [last.created_at, last.id] : null };
}

/** Reads the call until its outcome is stored, backing off from 20 ms to 200 ms; undefined past `ms`. */
async function outcomeWithin(store: Store, key: CallKey, ms: number, ask: () => Promise<void>): Promise<CallGetResult | undefined> {
  const deadline = performance.now() + ms;
  for (let wait = 20; ; wait = Math.min(wait * 2, 200)) {
    await ask();
    const done = await storedCall(store, key);
    if (done || performance.now() >= deadline) return done;
    await new Promise((r) => setTimeout(r, wait));
  }
}

/** The stored, `done` call of this key, or undefined when there is none (of this user). */
export async function storedCall(store: Store, key: CallKey): Promise<CallGetResult | undefined> {
  const row = await store.read((tx) => tx.messages.getToolMessage(key.userId, key.threadId, key.toolCallId));
  return row ? doneCall(key, row) : undefined;
}

function doneCall(key: CallKey, row: MessageRow): CallGetResult {
  const output = outputOf(row);
  if (!output) throw new Error(`stored tool message ${row.id} holds no tool output`);
  const args = output.tool_call_args;
  const outcome: ToolResponse = { tool_call_id: key.toolCallId, status: output.status, content: [{ type: 'text', text: row.content }] };
  return {
    thread_id: key.threadId,
    tool_call_id: key.toolCallId,
    action: `${args.module}.${args.method}`,
    args_sha256: argsSha256(args),
    state: 'done',
    created_at: row.created_at,
    updated_at: row.created_at,
    outcome,
  };
}
