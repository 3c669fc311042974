import Database from 'better-sqlite3';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { MIGRATIONS } from './migrations.js';

export type Db = Database.Database;

/**
 * Opens (creating when needed) the SQLite file, sets WAL, `synchronous`
 * (FULL unless NORMAL is asked for) and a busy timeout —
 * the daemon and project-cli processes share the file — and applies pending
 * migrations. Safe to call concurrently from several processes: migrations run
 * under BEGIN IMMEDIATE and re-check the version inside the lock.
 */
export function openDatabase(file: string, opts: { synchronous?: 'FULL' | 'NORMAL' } = {}): Db {
  const fresh = file !== ':memory:' && !existsSync(file);
  let db: Db | undefined;
  try {
    // History and the credential audit live here: owner-only, like the keys beside it.
    if (fresh) mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    db = new Database(file);
    if (fresh) chmodSync(file, 0o600);
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    // FULL: a committed transaction survives a power loss (contract §5); NORMAL only when configured.
    db.pragma(`synchronous = ${opts.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL'}`);
    db.pragma('foreign_keys = ON');
    migrate(db);
    return db;
  } catch (err) {
    db?.close();
    throw new DatabaseOpenError(`cannot open database ${file}: ${(err as Error).message}`);
  }
}

/** The database file could not be opened or migrated (wrong path, not SQLite, newer schema…). */
export class DatabaseOpenError extends Error {
  override name = 'DatabaseOpenError';
}

function migrate(db: Db): void {
  const current = () => db.pragma('user_version', { simple: true }) as number;
  // A newer toolgate wrote this file: an older one must not write into a schema it does not know.
  if (current() > MIGRATIONS.length) {
    throw new Error(`the database schema is at version ${current()}, newer than this toolgate knows (${MIGRATIONS.length}): upgrade toolgate`);
  }
  if (current() === MIGRATIONS.length) return;
  db.exec('BEGIN IMMEDIATE');
  try {
    for (let v = current(); v < MIGRATIONS.length; v++) {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}

export function nowIso(): string {
  return new Date().toISOString();
}
