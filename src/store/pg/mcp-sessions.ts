/**
 * MCP HTTP sessions on PostgreSQL (store.ts `McpSessionsRepo`): the table
 * every daemon on the database reads, so a session opened through one
 * daemon is served by any other behind a load balancer.
 */
import { nowIso } from '../database.js';
import type { McpSessionRow, McpSessionsRepo } from '../store.js';
import type { Query } from './unit.js';

const COLUMNS = 'id, user_id, agent, client, expires_ms, idle_ms, used_ms';

/** bigint columns come back as text from node-postgres: numbers here (milliseconds fit a double). */
function row(r: Record<string, unknown>): McpSessionRow {
  return {
    id: String(r.id),
    user_id: String(r.user_id),
    agent: String(r.agent),
    client: String(r.client),
    expires_ms: Number(r.expires_ms),
    idle_ms: Number(r.idle_ms),
    used_ms: Number(r.used_ms),
  };
}

export class PgMcpSessions implements McpSessionsRepo {
  constructor(private readonly q: Query) {}

  async open(r: McpSessionRow, maxPerUser: number, nowMs: number): Promise<boolean> {
    // The user's sessions, one opener at a time across every daemon (no `reads`: this begins the transaction,
    // and the lock lasts until its end), so the count below cannot be passed by an open racing it.
    await this.q(`SELECT pg_advisory_xact_lock(hashtext('toolgate/mcp_sessions'), hashtext($1))`, [r.user_id]);
    await this.q('DELETE FROM mcp_sessions WHERE user_id = $1 AND (expires_ms <= $2 OR used_ms + idle_ms <= $2)', [r.user_id, nowMs]);
    const [count] = await this.q<{ n: string }>('SELECT count(*) AS n FROM mcp_sessions WHERE user_id = $1', [r.user_id]);
    if (Number(count?.n ?? 0) >= maxPerUser) return false;
    await this.q(`INSERT INTO mcp_sessions (${COLUMNS}, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
      r.id,
      r.user_id,
      r.agent,
      r.client,
      r.expires_ms,
      r.idle_ms,
      r.used_ms,
      nowIso(),
    ]);
    return true;
  }

  async use(id: string, userId: string, nowMs: number, expiresMs: number): Promise<McpSessionRow | undefined> {
    const rows = await this.q(
      `UPDATE mcp_sessions SET used_ms = $3, expires_ms = GREATEST(expires_ms, $4)
        WHERE id = $1 AND user_id = $2 AND expires_ms > $3 AND used_ms + idle_ms > $3 RETURNING ${COLUMNS}`,
      [id, userId, nowMs, expiresMs],
    );
    return rows[0] ? row(rows[0]) : undefined;
  }

  async get(id: string, userId: string, nowMs: number): Promise<McpSessionRow | undefined> {
    const rows = await this.q(
      `SELECT ${COLUMNS} FROM mcp_sessions WHERE id = $1 AND user_id = $2 AND expires_ms > $3 AND used_ms + idle_ms > $3`,
      [id, userId, nowMs],
      ['mcp_sessions'],
    );
    return rows[0] ? row(rows[0]) : undefined;
  }

  async close(id: string): Promise<boolean> {
    const rows = await this.q('DELETE FROM mcp_sessions WHERE id = $1 RETURNING id', [id]);
    return rows.length === 1;
  }

  async live(ids: readonly string[], inUse: readonly string[], nowMs: number): Promise<string[]> {
    if (inUse.length > 0) {
      await this.q('UPDATE mcp_sessions SET used_ms = $2 WHERE id = ANY($1::text[]) AND expires_ms > $2', [inUse, nowMs]);
    }
    const rows = await this.q<{ id: string }>(
      'SELECT id FROM mcp_sessions WHERE id = ANY($1::text[]) AND expires_ms > $2 AND used_ms + idle_ms > $2',
      [ids, nowMs],
      ['mcp_sessions'],
    );
    return rows.map((r) => r.id);
  }
}
