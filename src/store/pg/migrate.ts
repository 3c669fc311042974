/**
 * PostgreSQL schema versioning. A fresh database is created from the declared
 * schema at `SCHEMA_VERSION`; a database at an older version moves through
 * `PG_UPGRADES`; one at a newer version is refused (an older toolgate must
 * not write into a schema it does not know).
 *
 * Several daemons may start on one database at the same moment: the whole
 * check-and-migrate runs in one transaction under a transaction-scoped
 * advisory lock, so exactly one of them creates the schema and the others
 * see it done.
 */
import type pg from 'pg';
import { DatabaseOpenError } from '../database.js';
import { SCHEMA, SCHEMA_VERSION, type Table } from '../schema.js';
import { createIndexSql, createSchemaStatements, createTableSql } from '../schema-ddl.js';
import { RowReport, type StoredRowCheck } from '../row-check.js';

/**
 * Upgrades of PostgreSQL databases, keyed by the version they lead to. The
 * declared schema's first PostgreSQL version is its baseline, so this starts
 * empty; append here (generated from the same declared ops as the SQLite
 * step) with every later schema change.
 */
export const PG_UPGRADES: ReadonlyMap<number, readonly string[]> = new Map([
  [
    4,
    [
      `CREATE TABLE credential_keys (kid text NOT NULL, public_jwk text NOT NULL CHECK (public_jwk::jsonb IS NOT NULL),
        recorded_at text NOT NULL, last_used_at text NOT NULL, PRIMARY KEY (kid))`,
    ],
  ],
  // The calls table as version 5 declared it: version 7 adds the columns of a call awaiting approval.
  [5, [createTableSql(withoutColumns(tableNamed('calls'), ['args', 'expires_at', 'source', 'job_id']), 'postgres')]],
  [6, [createTableSql(tableNamed('quota_counts'), 'postgres'), `ALTER TABLE automation_jobs ADD COLUMN quotas jsonb NOT NULL DEFAULT '{}'`]],
  [
    7,
    [
      'ALTER TABLE calls ADD COLUMN args text CHECK (args IS NULL OR args::jsonb IS NOT NULL)',
      'ALTER TABLE calls ADD COLUMN expires_at text',
      'ALTER TABLE calls ADD COLUMN source text',
      'ALTER TABLE calls ADD COLUMN job_id text',
      'ALTER TABLE automation_jobs ADD COLUMN approval jsonb',
      createTableSql(tableNamed('approval_audit'), 'postgres'),
    ],
  ],
  [8, [createTableSql(tableNamed('mcp_sessions'), 'postgres'), createIndexSql(indexNamed('mcp_sessions_user'))]],
]);

function withoutColumns(table: Table, names: readonly string[]): Table {
  return { ...table, columns: table.columns.filter((c) => !names.includes(c.name)) };
}

function indexNamed(name: string) {
  const index = SCHEMA.indexes.find((i) => i.name === name);
  if (!index) throw new Error(`no index ${name} in the declared schema`);
  return index;
}

function tableNamed(name: string) {
  const table = SCHEMA.tables.find((t) => t.name === name);
  if (!table) throw new Error(`no table ${name} in the declared schema`);
  return table;
}

/** Any 64-bit constant; the same one in every toolgate. */
const MIGRATION_LOCK = 0x746f6f6c67617465n; // "toolgate"

export async function migratePg(client: pg.ClientBase, knownVersion = SCHEMA_VERSION, checkRows?: StoredRowCheck): Promise<number> {
  // Fast path (every project-cli process opens the store): already current, no lock taken.
  const seen = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM toolgate_schema').catch(() => undefined);
  if (seen?.rows[0]?.version === knownVersion) return knownVersion;
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()]);
    await client.query('CREATE TABLE IF NOT EXISTS toolgate_schema (version integer NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
    const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM toolgate_schema');
    const current = rows[0]?.version ?? 0;
    if (current > knownVersion) {
      throw new DatabaseOpenError(
        `the database schema is at version ${current}, newer than this toolgate knows (${knownVersion}): upgrade toolgate before serving this database`,
      );
    }
    if (current === 0) {
      for (const sql of createSchemaStatements(SCHEMA, 'postgres')) await client.query(sql);
    } else {
      for (let v = current + 1; v <= knownVersion; v++) {
        const steps = PG_UPGRADES.get(v);
        if (!steps) throw new DatabaseOpenError(`no PostgreSQL upgrade from schema version ${v - 1} to ${v}`);
        for (const sql of steps) await client.query(sql);
      }
      // Rows written by an older toolgate are checked once, here, not on every read.
      if (checkRows) {
        const report = await checkStoredRows(client, checkRows);
        try {
          report.refuseIfAny(current, knownVersion);
        } catch (err) {
          throw new DatabaseOpenError((err as Error).message);
        }
      }
    }
    if (current !== knownVersion) await client.query('INSERT INTO toolgate_schema (version) VALUES ($1)', [knownVersion]);
    await client.query('COMMIT');
    return knownVersion;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

/** Walks every message and call record, a page at a time (inside the migration's transaction). */
async function checkStoredRows(client: pg.ClientBase, check: StoredRowCheck): Promise<RowReport> {
  const report = new RowReport();
  const PAGE = 1000;
  for (let after = 0; ; ) {
    const { rows } = await client.query<{ seq: string; id: string; user_id: string; thread_id: string; role: string; metadata: string; tool_call_id: string | null; status: string | null }>(
      'SELECT seq, id, user_id, thread_id, role, metadata::text AS metadata, tool_call_id, status FROM messages WHERE seq > $1 ORDER BY seq LIMIT $2',
      [after, PAGE],
    );
    for (const row of rows) report.add(`messages ${row.id} (user ${row.user_id}, thread ${row.thread_id})`, check.message(row));
    if (rows.length < PAGE) break;
    after = Number(rows[rows.length - 1]!.seq);
  }
  for (let offset = 0; ; offset += PAGE) {
    const { rows } = await client.query<{ user_id: string; thread_id: string; tool_call_id: string; args: string; outcome: string }>(
      'SELECT user_id, thread_id, tool_call_id, args, outcome FROM tool_calls ORDER BY user_id, thread_id, tool_call_id LIMIT $1 OFFSET $2',
      [PAGE, offset],
    );
    for (const row of rows) report.add(`tool_calls (user ${row.user_id}, thread ${row.thread_id}, tool_call_id ${row.tool_call_id})`, check.toolCall(row));
    if (rows.length < PAGE) break;
  }
  return report;
}
