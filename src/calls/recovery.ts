import { coreFailure, type CliDocument } from '../cli-router/core.js';
import type { ToolCallArgs } from '../codec/tool-output.js';
import type { Store } from '../store/store.js';
import { StoreConflictError } from '../store/store.js';
import type { Logger } from '../runtime/logger.js';
import { insertToolMessage, toolMessageOf } from './tool-message.js';

/**
 * Turns every call whose effect committed (project-cli's record) but whose
 * tool message was never stored — the daemon died in between — into its
 * tool message, exactly as the live path would have (`toolMessageOf`). Runs before serving;
 * all of them commit together. Another daemon recovering the same call
 * first is not an error.
 */
export async function recoverToolCalls(store: Store, log: Logger): Promise<number> {
  const pending = await store.read((tx) => tx.toolCalls.withoutMessage());
  const recovered = await Promise.all(
    pending.map((call) =>
      store
        .transaction(async (tx) => {
          const args = JSON.parse(call.args) as ToolCallArgs;
          const doc = JSON.parse(call.outcome) as CliDocument;
          const key = { userId: call.user_id, threadId: call.thread_id, toolCallId: call.tool_call_id };
          await insertToolMessage(tx, key, toolMessageOf(doc, args, call.tool_call_id));
          log.log('warn', 'recovered a tool call without its message', { thread_id: call.thread_id, tool_call_id: call.tool_call_id });
          return 1;
        })
        .catch((err: unknown) => {
          if (err instanceof StoreConflictError) return 0;
          throw err;
        }),
    ),
  );
  return recovered.reduce((a, b) => a + b, 0);
}

/** Clock differences between daemons tolerated when an approved call's age is judged (PostgreSQL). */
export const RUN_MARGIN_MS = 5_000;

/** At most this many approved calls are recovered at one start (the rest at the next). */
const MAX_ORPHANS = 1_000;

/** What the model reads of an approved call whose daemon died while it ran. */
const RUNNER_DIED =
  'the daemon running this approved call stopped before its outcome was stored; nothing of it was kept. ' +
  'Tell the user; call again with a new tool_call_id only if they still want it (it asks for approval again)';

/**
 * Ends every approved call whose runner died (contract sections 16 and 17): left `running` in `calls`
 * with no daemon to finish it, it would wait for ever, and so would a re-invocation. Each becomes `done`
 * in one unit with its pending row removed: its outcome as its record says when the action committed
 * (project-cli's record, as `recoverToolCalls`), else the failure INTERNAL saying so — recorded too, so
 * a runner that is still alive after all answers from that record rather than run: the call runs at
 * most once.
 *
 * A row is taken only once it is older than its run could be (`runLimitMs`: the action's time limit
 * and the kill grace, plus RUN_MARGIN_MS for the clocks of several daemons): a live runner has ended or
 * stopped such a call by then. So another process sharing a SQLite file, or a daemon on PostgreSQL that
 * has just approved the call and not yet taken its mark, is never cut short. Runs before serving and
 * with every expiry sweep (younger orphans are ended by a later one); resolves with how many ended.
 */
export async function recoverApprovedCalls(store: Store, log: Pick<Logger, 'log'>, runLimitMs: (action: string) => number, now = Date.now()): Promise<number> {
  const orphans = await store.transaction((tx) => tx.pendingCalls.orphaned(MAX_ORPHANS));
  let ended = 0;
  for (const key of orphans) {
    const done = await store
      .transaction(async (tx) => {
        const row = await tx.pendingCalls.get(key);
        if (!row || row.state !== 'running') return false;
        // Still within what its run may take: maybe alive elsewhere; a later sweep looks again.
        if (Date.parse(row.updatedAt) + runLimitMs(row.action) + RUN_MARGIN_MS > now) return false;
        await tx.pendingCalls.remove(key);
        // Its outcome was stored; only the row outlived the daemon.
        if (await tx.messages.getToolMessage(key.userId, key.threadId, key.toolCallId)) return true;
        const args = JSON.parse(row.args) as ToolCallArgs;
        const record = await tx.toolCalls.get(key.userId, key.threadId, key.toolCallId);
        if (record) {
          await insertToolMessage(tx, key, toolMessageOf(JSON.parse(record.outcome) as CliDocument, args, key.toolCallId));
        } else {
          const failure = coreFailure(args.module, args.method, 'INTERNAL', RUNNER_DIED);
          await tx.toolCalls.record({
            user_id: key.userId,
            thread_id: key.threadId,
            tool_call_id: key.toolCallId,
            action: row.action,
            args: row.args,
            args_sha256: row.argsSha256,
            outcome: failure.stdout,
            exit_code: failure.exitCode,
          });
          await insertToolMessage(tx, key, toolMessageOf(failure.doc, args, key.toolCallId));
        }
        log.log('warn', 'ended an approved call whose daemon died while it ran', { thread_id: key.threadId, tool_call_id: key.toolCallId, recorded: record !== undefined });
        return true;
      })
      .catch((err: unknown) => {
        // Another daemon ended it first.
        if (err instanceof StoreConflictError) return false;
        throw err;
      });
    if (done) ended += 1;
  }
  return ended;
}
