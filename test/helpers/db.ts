/**
 * Reading what a daemon stored, whichever engine it stored it in: tests look
 * at the bytes in the database, not at what the daemon says about them.
 * Queries are written once with `?` placeholders in the SQL both engines
 * share; PostgreSQL gets them renumbered as `$1, $2…`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { isPostgresUrl } from '../../src/store/pg/url.js';
import { pgQuery } from './pg.js';

export async function dbRows<R = Record<string, unknown>>(target: string, sql: string, params: unknown[] = []): Promise<R[]> {
  if (isPostgresUrl(target)) {
    let n = 0;
    return pgQuery<R>(target, sql.replace(/\?/g, () => `$${++n}`), params);
  }
  const db = new Database(target, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...params) as R[];
  } finally {
    db.close();
  }
}

export async function dbCount(target: string, sql: string, params: unknown[] = []): Promise<number> {
  const [row] = await dbRows<{ n: number }>(target, sql, params);
  return Number(row?.n ?? 0);
}

/**
 * Every byte the store holds, as text, for secret scans: the SQLite files of
 * the data folder (WAL included), or every row of every PostgreSQL table.
 */
export async function storedText(target: string, dataDir: string): Promise<string[]> {
  if (isPostgresUrl(target)) {
    const tables = await pgQuery<{ t: string }>(target, "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public'");
    const out: string[] = [];
    for (const { t } of tables) {
      // Table names come from the catalog, quoted as identifiers.
      const rows = await pgQuery<{ r: string }>(target, `SELECT row_to_json(x)::text AS r FROM "${t.replace(/"/g, '""')}" x`);
      out.push(rows.map((r) => r.r).join('\n'));
    }
    return out;
  }
  return readdirSync(dataDir)
    .filter((f) => f.startsWith('toolgate.db'))
    .map((f) => readFileSync(join(dataDir, f)).toString('latin1'));
}
