import type { CliDocument } from '../cli-router/core.js';
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
