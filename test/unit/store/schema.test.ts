/**
 * One declared schema (src/store/schema.ts): a SQLite file migrated through
 * its append-only steps must end up exactly as the declaration rendered for
 * SQLite — so the PostgreSQL schema, generated from the same declaration,
 * has the same tables and columns.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase } from '../../../src/store/database.js';
import { MIGRATIONS } from '../../../src/store/migrations.js';
import { SCHEMA, SCHEMA_VERSION } from '../../../src/store/schema.js';
import { createSchemaStatements } from '../../../src/store/schema-ddl.js';
import { tempDir } from '../../helpers/repo.js';

type Db = Database.Database;

/** Everything about a table that matters, independent of how its DDL was written. */
function describeSchema(db: Db): Record<string, unknown> {
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>).map((t) => t.name);
  const out: Record<string, unknown> = {};
  for (const t of tables) {
    const columns = db.prepare(`SELECT name, type, "notnull" AS nn, dflt_value AS d, pk FROM pragma_table_info(?) ORDER BY cid`).all(t);
    const fks = db.prepare('SELECT "table" AS ref, "from" AS col, "to" AS refcol, on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq').all(t);
    const indexes = (db.prepare('SELECT name, "unique" AS u, origin, partial FROM pragma_index_list(?)').all(t) as Array<{ name: string; u: number; origin: string; partial: number }>)
      .map((i) => ({
        // Auto-named indexes (UNIQUE/PRIMARY KEY constraints) are named by SQLite, so compare them by columns.
        name: i.origin === 'c' ? i.name : i.origin,
        unique: i.u,
        partial: i.partial,
        columns: (db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').all(i.name) as Array<{ name: string }>).map((c) => c.name),
      }))
      .sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
    out[t] = { columns, fks, indexes };
  }
  return out;
}

test('a SQLite file migrated step by step has exactly the declared schema', () => {
  const migrated = openDatabase(join(tempDir(), 'migrated.db'));
  const declared = new Database(':memory:');
  for (const sql of createSchemaStatements(SCHEMA, 'sqlite')) declared.exec(sql);
  try {
    assert.equal(MIGRATIONS.length, SCHEMA_VERSION, 'SCHEMA_VERSION follows the SQLite steps');
    assert.deepEqual(describeSchema(migrated), describeSchema(declared));
  } finally {
    migrated.close();
    declared.close();
  }
});

test('the PostgreSQL DDL types messages.metadata as jsonb and content as text, and binds no values', () => {
  const ddl = createSchemaStatements(SCHEMA, 'postgres').join(';\n');
  assert.match(ddl, /\bmetadata jsonb NOT NULL DEFAULT '\{\}'/);
  assert.match(ddl, /\bcontent text NOT NULL/);
  assert.doesNotMatch(ddl, /json_valid|typeof\(|AUTOINCREMENT/);
});

test('a SQLite file from a newer toolgate is refused with a clear error', () => {
  const file = join(tempDir(), 'newer.db');
  openDatabase(file).close();
  const raw = new Database(file);
  raw.pragma(`user_version = ${MIGRATIONS.length + 1}`);
  raw.close();
  assert.throws(() => openDatabase(file), /schema is at version \d+, newer than this toolgate knows/);
});
