import type { z } from 'zod';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Admission, CliDocument } from '../cli-router/core.js';
import { argsSha256 } from '../codec/canonical-json.js';
import { DATABASE_UNAVAILABLE_MESSAGE, StoreConflictError, StoreUnavailableError } from '../store/store.js';
import type { ToolInvokeParams } from '../protocol/methods.js';
import type { ToolResponse } from '../protocol/tool.js';
import { DaemonError } from '../runtime/errors.js';
import type { Session } from '../sessions/sessions.js';
import type { Peer } from '../runtime/peer.js';
import type { OwnCall, SubscriptionRegistry } from '../threads/subscriptions.js';
import { SHARE_AFTER_MS, SHARE_SETTLE_MS, type RunningCall, type RunningCalls } from './running-calls.js';
import type { ExecDeps, Executor } from './executor.js';
import type { Logger } from '../runtime/logger.js';
import { storeOutcome, type Call, type CallPrincipal, type Outcome } from './call.js';
import { seedOutput } from '../threads/message-views.js';
import { CallStopped } from './call-stopped.js';
import { giveBack, rateLimitedError, takeQuota, type QuotaDecision } from './quotas.js';
import type { PendingCallsRepo, QuotaCounter, ToolCallRecord } from '../store/store.js';
import { EXIT_OK, exitCodeFor } from '../cli-router/errors.js';
import { answerOf, direct, duplicateOfPending, messageOfDoc, replay, type ToolCallAnswer } from './call-answers.js';
import { askApproval, type AskDeps } from './approval-ask.js';

export type { ToolResponse };

/** PostgreSQL: how many times a call that finds its quota's window full looks again for a twin on another daemon (every SHARE_SETTLE_MS). */
const QUOTA_SETTLE_CHECKS = 4;

type Params = z.infer<typeof ToolInvokeParams>;

/** What settling an admitted call needs: its executor and what the executor needs. */
export interface SettleDeps extends ExecDeps {
  executor: Executor;
}

/** What a `tool/invoke` needs: settling, quotas, approvals, the running calls and the caller's subscriptions. */
export interface ToolInvokeDeps extends SettleDeps, AskDeps {
  calls: RunningCalls;
  subscriptions: SubscriptionRegistry;
  /** Configured secrets: text carrying one verbatim is refused. */
  secrets?: readonly string[] | undefined;
  metrics?: { quotaRejected(action: string): void } | undefined;
}

export type { ToolCallAnswer };

/**
 * `tool/invoke`: given the call's admission (core `admitCall`, made once by
 * ToolCalls.invoke: no credential in the input, the action exists and is
 * whitelisted), answer a call stored
 * before from the store, else run it with the daemon's executor (which
 * stores its tool message), then — only once that commit is durable —
 * publish it on the thread-event bus and answer.
 *
 * The caller's `tool/result` notifications (a batch: one non-final per
 * item, then the final one) reach its connection before the response,
 * through the thread-event bus's ordered dispatch, the path every
 * subscriber's take (subscriptions.ts `deliverOwn`): a subscription of the
 * caller's connection sends them in the thread's order and marks the call
 * sent, else the caller's own part of that dispatch sends them — a
 * subscribed caller gets each exactly once. A stored call replayed, an id used with other
 * arguments, a refused credential reach the caller only — no event
 * happened.
 */
/** A call's answer, with the projection object the response's text was made from (ToolCalls.invoke is its one caller). */
export async function answerToolCall(
  deps: ToolInvokeDeps,
  conn: Peer,
  session: Session,
  params: Params,
  admission: Admission,
  signal: AbortSignal,
  requestLog: Logger,
): Promise<ToolCallAnswer> {
  // A credential or token anywhere in the args: only the masked copy is ever sent, and nothing is kept.
  const args = admission.admitted ? params.args : admission.args;
  const action = admission.admitted ? admission.name : `${args.module}.${args.method}`;
  const log = requestLog.child({ thread_id: params.thread_id, tool_call_id: params.tool_call_id, action });

  // Cancelled before anything happened: leave no trace, not even a thread.
  if (signal.aborted) throw new DaemonError('CANCELLED', 'request cancelled');
  // Contract section 5: refused, never stored — no thread, no message; only the caller hears of it.
  if (!admission.admitted && !admission.kept) return direct(conn, params.thread_id, messageOfDoc(admission.doc, args, params.tool_call_id));

  const call: Call = {
    userId: session.userId,
    threadId: params.thread_id,
    toolCallId: params.tool_call_id,
    args,
    argsSha256: argsSha256(args),
    maxResultBytes: deps.maxResultBytes,
  };
  // Running from its admission until its outcome is stored (methods.md, "A call's lifecycle") — while it
  // counts against its quotas too: its user may stop it from anywhere (call/cancel), the caller by cancelling
  // this very request, and its time limit stops it (contract section 16). A call that goes on to await
  // approval leaves the running calls first: that wait is no part of its time, and call/get says so.
  const stopping = (reason: CallStopped) => log.log('info', 'tool call stopping', { code: reason.code });
  const { running, finish } = deps.calls.start({ ...call, action }, deps.timeoutMs(action), stopping);
  // The request's own cancel acts as call/cancel: every run of this call stops (a retry's twin included).
  const cancel = () => void deps.calls.stop(call, CallStopped.cancelled(), call.argsSha256);
  signal.addEventListener('abort', cancel, { once: true });
  // Cancelled while it was being admitted (an await ago): stopped as it starts.
  if (signal.aborted) cancel();
  let left = false;
  const leave = () => {
    if (left) return;
    left = true;
    signal.removeEventListener('abort', cancel);
    finish();
  };
  try {
    return await admitAndRun(deps, conn, session, call, admission, action, log, signal, running, leave);
  } finally {
    leave();
  }
}

/**
 * The rest of `answerToolCall` for a call registered as running: its
 * quotas, approval, then its run. `leave` ends its registration (before it
 * awaits approval, or once its outcome is stored; called again, it does nothing).
 */
async function admitAndRun(
  deps: ToolInvokeDeps,
  conn: Peer,
  session: Session,
  call: Call,
  admission: Admission,
  action: string,
  log: Logger,
  signal: AbortSignal,
  running: RunningCall,
  leave: () => void,
): Promise<ToolCallAnswer> {
  const { args } = call;
  // Contract section 17: whitelist, input, then quota — a call whose input does not validate fails at once (as
  // INVALID_ACTION_INPUT, when it runs below): it counts nothing and nobody is asked about it. Parsed here only
  // when a quota or an approval may apply (the executor validates every call anyway).
  let validity: boolean | undefined;
  const valid = () => (validity ??= admission.admitted && admission.action.input.safeParse(args.input).success);
  // Contract section 20: a valid call counts against its quotas before anything of it runs (an action no quota
  // names costs no statement). Over a quota: answered, nothing run, counted or stored — its id stays free.
  let quota: QuotaDecision = { kind: 'free' };
  if (session.quotas && valid()) {
    try {
      quota = await takeQuota(deps.store, session.quotas, call, action, running.signal);
      // The window is full — with this very call, maybe: the same id and args counted by a run of this daemon
      // that began first (a host retrying on another connection while the first try runs). That is no other
      // call: wait for that run to end, then look again (stored by then, this one is a replay, never counted).
      while (quota.kind === 'limited' && deps.calls.hasEarlierTwin(running)) {
        log.log('info', 'tool call waits for its twin', { args_sha256: call.argsSha256 });
        await untilAborted(deps.calls.earlierEnded(running), running.signal);
        // Stopped meanwhile: the count below refuses at once (CallStopped), and the call is stored as stopped.
        quota = await takeQuota(deps.store, session.quotas, call, action, running.signal);
      }
      // PostgreSQL: the twin may run on another daemon (a host retrying through the load balancer), recorded
      // there only once it has run SHARE_AFTER_MS. Counted again past that, every SHARE_SETTLE_MS up to
      // QUOTA_SETTLE_CHECKS times: a call shared or stored by then is this one, and the count lets it through
      // uncounted (a replay, or a wait for its outcome). More than once: on a loaded machine the other daemon's
      // share came after a single look (the full test run's quotas suite), and the retry was refused.
      for (let check = 0; check < QUOTA_SETTLE_CHECKS && quota.kind === 'limited' && deps.store.sharedCalls && !running.signal.aborted; check++) {
        await untilAborted(sleep(SHARE_SETTLE_MS), running.signal);
        quota = await takeQuota(deps.store, session.quotas, call, action, running.signal);
      }
    } catch (err) {
      // Stopped before it was counted: uncounted, and stored as stopped below.
      if (err instanceof CallStopped) quota = { kind: 'free' };
      else if (!(err instanceof StoreUnavailableError)) throw err;
      else return unavailable(conn, call, log, err);
    }
    if (quota.kind === 'limited') {
      deps.metrics?.quotaRejected(action);
      log.log('info', 'tool call refused: quota reached', { quota: quota.refusal.pattern, period: quota.refusal.period, retry_after_ms: quota.refusal.retryAfterMs });
      const doc: CliDocument = { ok: false, module: args.module, method: args.method, error: rateLimitedError(args.module, args.method, quota.refusal) };
      return direct(conn, call.threadId, messageOfDoc(doc, args, call.toolCallId));
    }
  }
  const counted = quota.kind === 'counted' ? quota.counters : undefined;
  running.passQuotas();
  // Stopped while it was counted: a new call asks no one and runs nothing; its run below stores it as stopped.
  const stopped = () => running.signal.aborted;
  // From here a subscription of this connection that sends the call's stored message marks it sent.
  const own = deps.subscriptions.expect(conn.id, call.userId, call.threadId, call.toolCallId);
  // Contract section 17: a valid call to an `ask` action waits for a person first (an invalid one fails at
  // once, as any call). A Set lookup: an action that does not ask pays nothing more. It has counted against
  // its quotas already: asking is no way around them.
  if (!stopped() && admission.admitted && session.approval?.ask.has(action) && valid()) {
    try {
      // It leaves the running calls once it is stored awaiting approval (or found stored), not before.
      return await askApproval(deps, conn, session, call, own, log, signal, counted, leave);
    } finally {
      leave();
      deps.subscriptions.done(own);
    }
  }
  // A profile that asks may have left a call awaiting approval under this id (the one read this adds, and
  // only for such profiles): other args are a DUPLICATE_TOOL_CALL_ID, as for a done call, and nothing runs;
  // the same args (the profile stopped asking this action meanwhile) wait for that call's outcome like any re-invocation.
  let pending: Awaited<ReturnType<PendingCallsRepo['get']>>;
  try {
    pending = session.approval && session.approval.ask.size > 0 ? await deps.store.read((tx) => tx.pendingCalls.get(call)) : undefined;
  } catch (err) {
    // Nothing ran: the count is given back and the call's place freed, as when its unit cannot start.
    deps.subscriptions.done(own);
    if (!(err instanceof StoreUnavailableError)) throw err;
    await giveBack(deps.store, call.userId, counted, log);
    return unavailable(conn, call, log, err);
  }
  // Even when this retry was stopped while counted: the call awaiting approval is what stands (a cancel ends it
  // too; shutdown leaves it stored across the restart).
  if (pending) {
    try {
      if (pending.argsSha256 === call.argsSha256) return await askApproval(deps, conn, session, call, own, log, signal, counted, leave);
      // Given back before it leaves the running calls: a retry waiting for it counts again only after.
      await giveBack(deps.store, call.userId, counted, log);
      return duplicateOfPending(conn, call);
    } finally {
      leave();
      deps.subscriptions.done(own);
    }
  }
  const shared = shareRunning(deps, call, action, running, log);
  if (log.enabled('debug')) log.log('debug', 'tool call running');
  try {
    // A run of this id that began first (the same call retried while it runs, or another call reusing the id)
    // ends before this one runs: this one then answers from what that one stored — as a replay, or as
    // DUPLICATE_TOOL_CALL_ID — and two runs of one id never race their writes (a stopped one's failure against
    // the other's commit).
    await deps.calls.earlierEnded(running);
    return await runAndAnswer(deps, conn, session, call, admission, own, log, running.signal, counted);
  } finally {
    leave();
    shared?.();
    deps.subscriptions.done(own);
  }
}

/** Settles when `work` does, or at once when `signal` aborts. */
function untilAborted(work: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    void work.then(done, done);
  });
}

/**
 * PostgreSQL: a call still running after SHARE_AFTER_MS is marked as this
 * daemon's and recorded running in `calls`, so `call/get` and `call/cancel`
 * on any daemon find it (contract section 16). Off the call's path: it runs
 * while the call runs, and the returned end (once the outcome is stored)
 * removes the row, then the mark. Most calls end sooner and share nothing
 * (they are found `done` everywhere from their commit on).
 */
function shareRunning(deps: ToolInvokeDeps, c: Call, action: string, running: RunningCall, log: Logger): (() => void) | undefined {
  const shared = deps.store.sharedCalls;
  if (!shared || !deps.store.holdCall) return undefined;
  const key = { userId: c.userId, threadId: c.threadId, toolCallId: c.toolCallId };
  let started: Promise<() => Promise<void>> | undefined;
  const timer = setTimeout(() => {
    started = share();
    // Handled where it ends (below); a failure before then is no reason to fail the call.
    started.catch(() => {});
  }, SHARE_AFTER_MS);
  const share = async () => {
    const release = await deps.store.holdCall!(c.userId, c.threadId, c.toolCallId);
    try {
      await shared.running({ ...key, action, argsSha256: c.argsSha256, createdAt: running.createdAt });
    } catch (err) {
      await release();
      throw err;
    }
    return release;
  };
  return () => {
    clearTimeout(timer);
    void started
      ?.then(async (release) => {
        try {
          await shared.ended(key);
        } finally {
          await release();
        }
      })
      .catch((err: unknown) => log.log('warn', 'the running call could not be shared with other daemons', { err: (err as Error).message }));
  };
}

/** The stored part of a call: settle it, then answer it as run, as stored before, or as a duplicate id. */
async function runAndAnswer(
  deps: ToolInvokeDeps,
  conn: Peer,
  session: Session,
  call: Call,
  admission: Admission,
  own: OwnCall,
  log: Logger,
  signal: AbortSignal,
  counted: QuotaCounter[] | undefined,
): Promise<ToolCallAnswer> {
  const started = performance.now();
  let outcome: Outcome;
  try {
    outcome = await settle(deps, session, call, admission, log, signal);
  } catch (err) {
    if (!(err instanceof StoreUnavailableError)) throw err;
    await giveBack(deps.store, call.userId, counted, log);
    return unavailable(conn, call, log, err);
  }
  // Counted, then found stored (a twin of the call, raced from another connection or daemon, stored first): a
  // replay never counts.
  if (outcome.kind !== 'ran') await giveBack(deps.store, call.userId, counted, log);
  switch (outcome.kind) {
    case 'stored':
      return replay(deps, conn, call, outcome.row);
    case 'duplicate':
      // The id belongs to another call: answer, but store nothing under it.
      return direct(conn, call.threadId, outcome.message);
    case 'ran': {
      const { row, message } = outcome;
      log.log('info', 'tool call', { status: message.output.status, message_id: row.id, ms: Math.round(performance.now() - started) });
      seedOutput(row, message.output);
      const event = { userId: call.userId, threadId: call.threadId, row, origin: conn.id };
      await deps.subscriptions.deliverOwn(conn, own, event);
      return answerOf(message.output, message.text, message.projection);
    }
  }
}

/**
 * The call's unit of work: the executor's (admitted), or the whitelist's
 * refusal stored as the call's outcome. A call with the same id stored
 * first (before, or concurrently by another process): answer as it did; if
 * it has recorded the action but not stored its message yet, run again,
 * reading the store first this time — the core answers from that record.
 *
 * A stopped call is stored as stopped only if nothing committed it: a
 * `tool_calls` record of these args (a child wrote it, this call's or a
 * twin's on another daemon) is the call's real outcome, never hidden under a
 * stop failure.
 */
export async function settle(deps: SettleDeps, session: CallPrincipal, call: Call, admission: Admission, log: Logger, signal: AbortSignal): Promise<Outcome> {
  const storeDoc = (doc: CliDocument, orRecord = false) =>
    deps.store.transaction(async (tx): Promise<Outcome> => {
      const stored = await tx.messages.getToolMessage(call.userId, call.threadId, call.toolCallId);
      if (stored) return { kind: 'stored', row: stored };
      const recorded = orRecord ? await tx.toolCalls.get(call.userId, call.threadId, call.toolCallId) : undefined;
      if (recorded && recorded.args_sha256 === call.argsSha256) return storeOutcome(tx, call, JSON.parse(recorded.outcome) as CliDocument);
      // A stop is recorded as the call's outcome, beside its message: a run of this call that no stop reached
      // (a twin on another daemon, whose child still waits to commit) then fails on the record's key and its
      // writes are undone — never committed under a CANCELLED call. Its commit first makes this one conflict.
      if (orRecord && !recorded) await tx.toolCalls.record(stopRecord(call, doc));
      return storeOutcome(tx, call, doc);
    });
  const run = (optimistic: boolean): Promise<Outcome> =>
    admission.admitted ? deps.executor.execute(deps, session, { ...call, action: admission.action }, log, optimistic, signal) : storeDoc(admission.doc);
  try {
    try {
      // First as a new call (the executor may skip reading the store first); a stored twin shows as a conflict.
      return await run(true);
    } catch (err) {
      if (!(err instanceof StoreConflictError)) throw err;
      const winner = await deps.store.read((tx) => tx.messages.getToolMessage(call.userId, call.threadId, call.toolCallId));
      return winner ? { kind: 'stored', row: winner } : await run(false);
    }
  } catch (err) {
    if (!(err instanceof CallStopped)) throw err;
    // Stopped before anything of it committed (its unit was undone whole): stored as stopped, done.
    const { module, method } = call.args;
    log.log('info', 'tool call stopped', { code: err.code });
    const stoppedDoc: CliDocument = { ok: false, module, method, error: { code: err.code, message: err.message, module, method } };
    for (let attempt = 0; ; attempt++) {
      try {
        return await storeDoc(stoppedDoc, true);
      } catch (conflict) {
        // A twin of this call (another daemon's) stored first: its outcome is the call's. Or its child committed
        // the call's record first: stored again, that record is the outcome.
        if (!(conflict instanceof StoreConflictError)) throw conflict;
        const winner = await deps.store.read((tx) => tx.messages.getToolMessage(call.userId, call.threadId, call.toolCallId));
        if (winner) return { kind: 'stored', row: winner };
        if (attempt > 0) throw conflict;
      }
    }
  }
}

/** The record of a call stopped before anything of it committed: its stop failure, as project-cli would record it. */
function stopRecord(call: Call, doc: CliDocument): Omit<ToolCallRecord, 'created_at'> {
  const { module, method, input } = call.args;
  return {
    user_id: call.userId,
    thread_id: call.threadId,
    tool_call_id: call.toolCallId,
    action: `${module}.${method}`,
    args: JSON.stringify({ module, method, input }),
    args_sha256: call.argsSha256,
    outcome: JSON.stringify(doc),
    exit_code: doc.ok ? EXIT_OK : exitCodeFor(doc.error.code),
  };
}

/** The database went away: answered, never stored; the same tool_call_id is safe to retry. */
function unavailable(conn: Peer, call: Call, log: Logger, err: StoreUnavailableError): ToolCallAnswer {
  log.log('warn', 'tool call failed: database unavailable', { error: err.message });
  const { module, method } = call.args;
  const doc: CliDocument = { ok: false, module, method, error: { code: 'INTERNAL', message: DATABASE_UNAVAILABLE_MESSAGE, module, method } };
  return direct(conn, call.threadId, messageOfDoc(doc, call.args, call.toolCallId));
}


