import type { Db } from './database.js';
import { nowIso } from './database.js';

export interface Memory {
  key: string;
  content: string;
  updated_at: string;
}

export function upsertMemory(db: Db, userId: string, key: string, content: string): Memory {
  const now = nowIso();
  db.prepare(
    `INSERT INTO memories (user_id, key, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT(user_id, key) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at`,
  ).run(userId, key, content, now, now);
  return { key, content, updated_at: now };
}

export function forgetMemory(db: Db, userId: string, key: string): boolean {
  return db.prepare('DELETE FROM memories WHERE user_id = ? AND key = ?').run(userId, key).changes === 1;
}

export function readMemories(db: Db, userId: string, key?: string): Memory[] {
  if (key !== undefined) {
    return db.prepare('SELECT key, content, updated_at FROM memories WHERE user_id = ? AND key = ?').all(userId, key) as Memory[];
  }
  return db.prepare('SELECT key, content, updated_at FROM memories WHERE user_id = ? ORDER BY key').all(userId) as Memory[];
}
