import type { Db } from './database.js';
import { nowIso } from './database.js';

export interface ToolCallRecord {
  thread_id: string;
  tool_call_id: string;
  user_id: string;
  action: string;
  /** `{module, method, input}` as the model wrote them (JSON). */
  args: string;
  args_sha256: string;
  outcome: string;
  exit_code: number;
  created_at: string;
}

export function getToolCall(db: Db, threadId: string, toolCallId: string): ToolCallRecord | undefined {
  return db
    .prepare('SELECT * FROM tool_calls WHERE thread_id = ? AND tool_call_id = ?')
    .get(threadId, toolCallId) as ToolCallRecord | undefined;
}

/** Written by project-cli inside the action's own transaction. */
export function recordToolCall(
  db: Db,
  r: Omit<ToolCallRecord, 'created_at'>,
): void {
  db.prepare(
    `INSERT INTO tool_calls (thread_id, tool_call_id, user_id, action, args, args_sha256, outcome, exit_code, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(r.thread_id, r.tool_call_id, r.user_id, r.action, r.args, r.args_sha256, r.outcome, r.exit_code, nowIso());
}

/** Calls that committed their effect but whose tool message was never stored. */
export function toolCallsWithoutMessage(db: Db): ToolCallRecord[] {
  return db
    .prepare(
      `SELECT c.* FROM tool_calls c
        WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.thread_id = c.thread_id AND m.tool_call_id = c.tool_call_id)
        ORDER BY c.created_at`,
    )
    .all() as ToolCallRecord[];
}
