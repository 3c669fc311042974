import type { ToolCallRecord, ToolCallsRepo } from '../store.js';
import { nowIso, uniquely, type Statements } from './statements.js';

/** The call a unit assumed never stored (`Tx.assumeNewCall`): its next `get` answers "no record" unread. */
export interface AssumedCall {
  key: { userId: string; threadId: string; toolCallId: string } | undefined;
}

export function sqliteToolCalls(st: Statements, assumed: AssumedCall): ToolCallsRepo {
  return {
    async get(userId: string, threadId: string, toolCallId: string) {
      const key = assumed.key;
      if (key !== undefined) {
        assumed.key = undefined;
        if (key.userId === userId && key.threadId === threadId && key.toolCallId === toolCallId) return undefined;
      }
      return st
        .get('SELECT * FROM tool_calls WHERE user_id = ? AND thread_id = ? AND tool_call_id = ?')
        .get(userId, threadId, toolCallId) as ToolCallRecord | undefined;
    },
    async record(r: Omit<ToolCallRecord, 'created_at'>) {
      uniquely('tool_calls_pkey', () =>
        st
          .get(
            `INSERT INTO tool_calls (user_id, thread_id, tool_call_id, action, args, args_sha256, outcome, exit_code, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(r.user_id, r.thread_id, r.tool_call_id, r.action, r.args, r.args_sha256, r.outcome, r.exit_code, nowIso()),
      );
    },
    async withoutMessage() {
      return st
        .get(
          `SELECT c.* FROM tool_calls c
            WHERE NOT EXISTS (SELECT 1 FROM messages m
                               WHERE m.user_id = c.user_id AND m.thread_id = c.thread_id AND m.tool_call_id = c.tool_call_id)
            ORDER BY c.created_at`,
        )
        .all() as ToolCallRecord[];
    },
  };
}
