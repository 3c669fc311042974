/**
 * Deciding a call awaiting approval (contract section 17), from any session
 * of its user on any daemon: `call/approve`, `call/deny` and the HTTP
 * approval route all come here. A decision names the call's args digest; a
 * digest that is not the call's changes nothing (ARGS_MISMATCH). Of any
 * number of racing decisions exactly one changes the stored state (one
 * conditional statement); the others find the call decided and answer its
 * state. An approval runs the call here, once, under a credential issued
 * only now; the pending `tool/invoke` (wherever it waits) answers with the
 * outcome.
 */
import type { CallApprovalBody } from '../protocol/methods.js';
import { admitCall } from '../cli-router/core.js';
import type { CallCancelResult } from '../protocol/methods.js';
import type { ToolCallArgs } from '../protocol/tool.js';
import type { Call } from './call.js';
import type { PendingCallRow } from '../store/store.js';
import type { RunningCalls, StartedCall } from './running-calls.js';
import type { Logger } from '../runtime/logger.js';
import { seedOutput } from '../threads/message-views.js';
import { settle, type SettleDeps } from './tool-invoke.js';
import { callNotFound, settledAgain, storedCall } from './call-service.js';
import { argsMismatch, endPending, isExpired, woken, type PendingDeps } from './pending-calls.js';
import type { CallKey } from './running-calls.js';

export interface Decision {
  argsSha256: string;
  decision: CallApprovalBody['decision'];
  /** A deny's reason, the approver's text (refused earlier when it carries a secret). */
  reason?: string | undefined;
  /** Where it was decided: `stdio`, `ws`, `http`, `mcp`. */
  surface: string;
}

export async function decideCall(deps: DecideDeps, key: CallKey, d: Decision, log: Logger): Promise<CallCancelResult> {
  const pending = await deps.store.read((tx) => tx.pendingCalls.get(key));
  if (!pending) return decided(deps, key, d.argsSha256);
  if (pending.argsSha256 !== d.argsSha256) throw argsMismatch();
  if (pending.state === 'running') return { state: 'running' };
  if (isExpired(pending)) {
    await endPending(deps, key, { decision: 'expire', surface: 'ttl' });
    return decided(deps, key, d.argsSha256);
  }
  if (d.decision === 'deny') {
    await endPending(deps, key, { decision: 'deny', surface: d.surface, reason: d.reason });
    return decided(deps, key, d.argsSha256);
  }
  // Running before the approval commits: a call/cancel that comes between that commit and the run stops it
  // (it then ends CANCELLED), and never finds the call neither pending nor running here. A cancel that ends it
  // first (its commit wins) leaves nothing to run: the mark goes again.
  // Its time limit counts from the commit (runApproved): a wait for the write lock here is no part of it.
  const run = deps.calls.start({ ...key, action: pending.action, argsSha256: pending.argsSha256 }, undefined);
  let won: PendingCallRow | undefined;
  try {
    won = await deps.store.transaction(async (tx) => {
      const row = await tx.pendingCalls.approve(key, d.argsSha256);
      if (row) await tx.approvalAudit.record({ ...key, argsSha256: row.argsSha256, decision: 'approve', surface: d.surface });
      return row;
    });
  } finally {
    if (!won) run.finish();
  }
  if (!won) return decided(deps, key, d.argsSha256);
  log.log('info', 'tool call approved', { thread_id: key.threadId, tool_call_id: key.toolCallId, action: won.action, surface: d.surface });
  await runApproved(deps, won, run, log);
  return decided(deps, key, d.argsSha256);
}


/** What deciding a pending call needs: ending it, or running it once approved. */
export interface DecideDeps extends PendingDeps, SettleDeps {
  calls: RunningCalls;
  /** Configured secrets: an approved call's args are admitted again against them. */
  secrets?: readonly string[] | undefined;
}

/**
 * The call's state once decided (by this request or another), or a call that never asked: done with its
 * outcome, or still running. A decision never changes a call that is not awaiting approval.
 */
async function decided(deps: DecideDeps, key: CallKey, argsSha256: string, again = true): Promise<CallCancelResult> {
  const done = await storedCall(deps.store, key);
  if (done) {
    if (done.args_sha256 !== argsSha256) throw argsMismatch();
    return { state: 'done', ...(done.outcome ? { outcome: done.outcome } : {}) };
  }
  const pending = await deps.store.read((tx) => tx.pendingCalls.get(key));
  // A call that never asked, running here or (PostgreSQL) on another daemon: the user's call, in its state.
  const running = pending ?? deps.calls.find(key) ?? (await deps.store.sharedCalls?.find(key));
  if (!running) {
    // It may have finished between the reads: its stored outcome then answers.
    if (await storedCall(deps.store, key)) return decided(deps, key, argsSha256, false);
    // PostgreSQL: begun on another daemon a moment ago, it is not recorded yet.
    if (await settledAgain(deps, again)) return decided(deps, key, argsSha256, false);
    throw callNotFound();
  }
  if (running.argsSha256 !== argsSha256) throw argsMismatch();
  return { state: pending?.state ?? 'running' };
}

/**
 * Runs an approved call here, exactly as `tool/invoke` runs a call: the
 * whitelist already admitted it when it was asked; its credential is issued
 * now by the executor. It is a running call of this daemon (call/get,
 * call/cancel and its time limit reach it) until its outcome is stored; then
 * its pending row goes and every waiter looks again.
 */
async function runApproved(deps: DecideDeps, row: PendingCallRow, { running, finish, arm }: StartedCall, log: Logger): Promise<void> {
  // From the approval on: the wait for a person is no part of the call's time (security.md, operations.md).
  arm(deps.timeoutMs(row.action));
  const started = performance.now();
  const key = { userId: row.userId, threadId: row.threadId, toolCallId: row.toolCallId };
  const callLog = log.child({ thread_id: row.threadId, tool_call_id: row.toolCallId, action: row.action });
  let call: Call;
  let admission: ReturnType<typeof admitCall>;
  let release: (() => Promise<void>) | undefined;
  try {
    const args = JSON.parse(row.args) as ToolCallArgs;
    call = { ...key, args, argsSha256: row.argsSha256, maxResultBytes: deps.maxResultBytes };
    admission = admitCall([row.action], args, deps.secrets);
    // PostgreSQL: marked as this daemon's while it runs, so another daemon's call/get and call/cancel find it.
    release = await deps.store.holdCall?.(row.userId, row.threadId, row.toolCallId);
  } catch (err) {
    // Never left registered: call/get would say `running`, and a cancel wait, for good.
    finish();
    throw err;
  }
  try {
    const outcome = await settle(deps, { userId: row.userId, source: row.source, jobId: row.jobId }, call, admission, callLog, running.signal);
    if (outcome.kind === 'ran') {
      seedOutput(outcome.row, outcome.message.output);
      deps.threadEvents.publish({ userId: row.userId, threadId: row.threadId, row: outcome.row });
      callLog.log('info', 'tool call', { status: outcome.message.output.status, message_id: outcome.row.id, ms: Math.round(performance.now() - started) });
    }
  } finally {
    finish();
    try {
      await deps.store.transaction((tx) => tx.pendingCalls.remove(key));
    } finally {
      await release?.();
      await woken(deps, key);
    }
  }
}
