import type { Db } from './database.js';
import { nowIso } from './database.js';

export interface ThreadSummary {
  thread_id: string;
  created_at: string;
  updated_at: string;
  message_count: number;
}

/**
 * Claims a thread for a user: the first user to use a thread id owns it.
 * Returns false when another user owns it — callers answer exactly as for a
 * thread that never existed, so ownership leaks nothing.
 */
export function claimThread(db: Db, threadId: string, userId: string): boolean {
  const now = nowIso();
  db.prepare('INSERT OR IGNORE INTO threads (id, user_id, created_at, updated_at) VALUES (?, ?, ?, ?)').run(
    threadId,
    userId,
    now,
    now,
  );
  return ownsThread(db, threadId, userId);
}

export function ownsThread(db: Db, threadId: string, userId: string): boolean {
  return db.prepare('SELECT 1 FROM threads WHERE id = ? AND user_id = ?').get(threadId, userId) !== undefined;
}

export function touchThread(db: Db, threadId: string, at: string): void {
  db.prepare('UPDATE threads SET updated_at = ? WHERE id = ? AND updated_at < ?').run(at, threadId, at);
}

export function listThreads(db: Db, userId: string, limit: number): ThreadSummary[] {
  return db
    .prepare(
      `SELECT t.id AS thread_id, t.created_at, t.updated_at,
              (SELECT count(*) FROM messages m WHERE m.thread_id = t.id) AS message_count
         FROM threads t WHERE t.user_id = ?
        ORDER BY t.updated_at DESC, t.rowid DESC LIMIT ?`,
    )
    .all(userId, limit) as ThreadSummary[];
}

/** True when the thread exists and belongs to someone else (subscribing must not learn more, nor write). */
export function ownedByAnother(db: Db, threadId: string, userId: string): boolean {
  return db.prepare('SELECT 1 FROM threads WHERE id = ? AND user_id <> ?').get(threadId, userId) !== undefined;
}
