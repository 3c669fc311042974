import type { McpSessionRow, McpSessionsRepo } from '../store.js';
import { nowIso, type Statements } from './statements.js';

const COLUMNS = 'id, user_id, agent, client, expires_ms, idle_ms, used_ms';

/** One connection per process and one writer per file: a unit's statements already run alone (no lock to take). */
export function sqliteMcpSessions(st: Statements): McpSessionsRepo {
  return {
    async open(row: McpSessionRow, maxPerUser: number, nowMs: number) {
      st.get('DELETE FROM mcp_sessions WHERE user_id = ? AND (expires_ms <= ? OR used_ms + idle_ms <= ?)').run(row.user_id, nowMs, nowMs);
      const { n } = st.get('SELECT count(*) AS n FROM mcp_sessions WHERE user_id = ?').get(row.user_id) as { n: number };
      if (n >= maxPerUser) return false;
      st.get(`INSERT INTO mcp_sessions (${COLUMNS}, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`).run(
        row.id,
        row.user_id,
        row.agent,
        row.client,
        row.expires_ms,
        row.idle_ms,
        row.used_ms,
        nowIso(),
      );
      return true;
    },
    async use(id: string, userId: string, nowMs: number, expiresMs: number) {
      return st
        .get(
          `UPDATE mcp_sessions SET used_ms = ?, expires_ms = max(expires_ms, ?)
            WHERE id = ? AND user_id = ? AND expires_ms > ? AND used_ms + idle_ms > ? RETURNING ${COLUMNS}`,
        )
        .get(nowMs, expiresMs, id, userId, nowMs, nowMs) as McpSessionRow | undefined;
    },
    async get(id: string, userId: string, nowMs: number) {
      return st
        .get(`SELECT ${COLUMNS} FROM mcp_sessions WHERE id = ? AND user_id = ? AND expires_ms > ? AND used_ms + idle_ms > ?`)
        .get(id, userId, nowMs, nowMs) as McpSessionRow | undefined;
    },
    async close(id: string) {
      return st.get('DELETE FROM mcp_sessions WHERE id = ?').run(id).changes === 1;
    },
    async live(ids: readonly string[], inUse: readonly string[], nowMs: number) {
      if (inUse.length > 0) {
        st.get('UPDATE mcp_sessions SET used_ms = ? WHERE id IN (SELECT value FROM json_each(?)) AND expires_ms > ?').run(nowMs, JSON.stringify(inUse), nowMs);
      }
      const rows = st
        .get('SELECT id FROM mcp_sessions WHERE id IN (SELECT value FROM json_each(?)) AND expires_ms > ? AND used_ms + idle_ms > ?')
        .all(JSON.stringify(ids), nowMs, nowMs) as Array<{ id: string }>;
      return rows.map((r) => r.id);
    },
  };
}
