import type { MemoriesRepo, Memory } from '../store.js';
import { nowIso, type Statements } from './statements.js';

export function sqliteMemories(st: Statements): MemoriesRepo {
  return {
    async upsert(userId: string, key: string, content: string) {
      const now = nowIso();
      st.get(
        `INSERT INTO memories (user_id, key, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(user_id, key) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at`,
      ).run(userId, key, content, now, now);
      return { key, content, updated_at: now };
    },
    async forget(userId: string, key: string) {
      return st.get('DELETE FROM memories WHERE user_id = ? AND key = ?').run(userId, key).changes === 1;
    },
    async read(userId: string, key: string) {
      return st.get('SELECT key, content, updated_at FROM memories WHERE user_id = ? AND key = ?').all(userId, key) as Memory[];
    },
    async page(userId: string, after: string | null, limit: number) {
      // BINARY collation: code point order, as PostgreSQL's COLLATE "C".
      if (after === null) return st.get('SELECT key, content, updated_at FROM memories WHERE user_id = ? ORDER BY key LIMIT ?').all(userId, limit) as Memory[];
      return st.get('SELECT key, content, updated_at FROM memories WHERE user_id = ? AND key > ? ORDER BY key LIMIT ?').all(userId, after, limit) as Memory[];
    },
  };
}
