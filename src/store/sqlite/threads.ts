import type { ThreadPosition, ThreadSummary, ThreadsRepo } from '../store.js';
import { nowIso, type Statements } from './statements.js';

/** Threads keyed by (user_id, id): another user's thread id is simply another row. */
export function sqliteThreads(st: Statements): ThreadsRepo {
  return {
    async claim(userId: string, threadId: string) {
      const now = nowIso();
      st.get('INSERT INTO threads (user_id, id, created_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(user_id, id) DO NOTHING').run(
        userId,
        threadId,
        now,
        now,
      );
    },
    async exists(userId: string, threadId: string) {
      return st.get('SELECT 1 FROM threads WHERE user_id = ? AND id = ?').get(userId, threadId) !== undefined;
    },
    async list(userId: string, after: ThreadPosition | null, limit: number) {
      // last_seq counts the thread's messages (they are never deleted). BINARY order = PostgreSQL's COLLATE "C".
      if (after === null) {
        return st
          .get(
            `SELECT id AS thread_id, created_at, updated_at, last_seq AS message_count
               FROM threads WHERE user_id = ?
              ORDER BY updated_at DESC, id DESC LIMIT ?`,
          )
          .all(userId, limit) as ThreadSummary[];
      }
      return st
        .get(
          `SELECT id AS thread_id, created_at, updated_at, last_seq AS message_count
             FROM threads WHERE user_id = ? AND (updated_at < ? OR (updated_at = ? AND id < ?))
            ORDER BY updated_at DESC, id DESC LIMIT ?`,
        )
        .all(userId, after.updatedAt, after.updatedAt, after.threadId, limit) as ThreadSummary[];
    },
  };
}
