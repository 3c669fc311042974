import Database from 'better-sqlite3';
import { accessSync, chmodSync, constants, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { MIGRATIONS } from './migrations.js';
import { RowReport, type StoredRowCheck } from './row-check.js';
import { DatabaseOpenError } from './database-open-error.js';
import { isoOfMs } from './iso-time.js';

export type Db = Database.Database;

/**
 * Opens (creating when needed) the SQLite file, sets WAL, `synchronous`
 * (FULL unless NORMAL is asked for) and a busy timeout —
 * the daemon and project-cli processes share the file — and applies pending
 * migrations. Safe to call concurrently from several processes: migrations run
 * under BEGIN IMMEDIATE and re-check the version inside the lock.
 */
export function openDatabase(file: string, opts: { synchronous?: 'FULL' | 'NORMAL'; checkRows?: StoredRowCheck | undefined } = {}): Db {
  const fresh = file !== ':memory:' && !existsSync(file);
  let db: Db | undefined;
  try {
    // History and the credential audit live here: owner-only, like the keys beside it.
    if (fresh) mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    if (file !== ':memory:') {
      const problem = unwritable(file, fresh);
      if (problem) throw new DatabaseOpenError(`cannot open database ${file}: ${problem}`);
    }
    db = new Database(file);
    if (fresh) chmodSync(file, 0o600);
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    // FULL: a committed transaction survives a power loss (contract §5); NORMAL only when configured.
    db.pragma(`synchronous = ${opts.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL'}`);
    db.pragma('foreign_keys = ON');
    // Statement journals (a group's per-unit SAVEPOINTs) and temporary tables stay in memory: on
    // the default they spill past 64 KiB to an unlinked file in /var/tmp — an open, ~150 writes
    // and a close per group commit, carrying copies of history pages outside the data folder.
    db.pragma('temp_store = MEMORY');
    migrate(db, opts.checkRows);
    return db;
  } catch (err) {
    db?.close();
    if (err instanceof DatabaseOpenError) throw err;
    throw new DatabaseOpenError(`cannot open database ${file}: ${(err as Error).message}`);
  }
}

/**
 * Why SQLite could not write `file`, in words, before it says only "unable to
 * open database file": WAL mode writes the `-wal` and `-shm` files beside the
 * database, so its folder must be writable as well as the file.
 */
function unwritable(file: string, fresh: boolean): string | null {
  const why = (err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'EROFS' ? 'a read-only file system' : (code ?? (err as Error).message);
  };
  const dir = dirname(file);
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (err) {
    return `its folder ${dir} is not writable (${why(err)}); SQLite writes the database and its -wal and -shm files there — choose another --db (or TOOLGATE_DB) or make the folder writable`;
  }
  if (fresh) return null;
  try {
    accessSync(file, constants.R_OK | constants.W_OK);
  } catch (err) {
    return `the file is not writable (${why(err)}) — choose another --db (or TOOLGATE_DB) or make the file writable`;
  }
  return null;
}

// In a module of its own: `toolgate` names it without loading better-sqlite3 (src/app/cli.ts).
export { DatabaseOpenError };

function migrate(db: Db, checkRows: StoredRowCheck | undefined): void {
  const current = () => db.pragma('user_version', { simple: true }) as number;
  // A newer toolgate wrote this file: an older one must not write into a schema it does not know.
  if (current() > MIGRATIONS.length) {
    throw new Error(`the database schema is at version ${current()}, newer than this toolgate knows (${MIGRATIONS.length}): upgrade toolgate`);
  }
  if (current() === MIGRATIONS.length) return;
  db.exec('BEGIN IMMEDIATE');
  try {
    const from = current();
    for (let v = from; v < MIGRATIONS.length; v++) {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }
    // Rows written by an older toolgate are checked once, here, not on every read.
    if (checkRows && from > 0) checkStoredRows(db, checkRows).refuseIfAny(from, MIGRATIONS.length);
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}

/** Walks every message and call record of a migrated file (one pass each, rows streamed). */
function checkStoredRows(db: Db, check: StoredRowCheck): RowReport {
  const report = new RowReport();
  const messages = db.prepare('SELECT id, user_id, thread_id, role, metadata, tool_call_id, status FROM messages ORDER BY seq');
  for (const row of messages.iterate() as Iterable<{ id: string; user_id: string; thread_id: string; role: string; metadata: string; tool_call_id: string | null; status: string | null }>) {
    report.add(`messages ${row.id} (user ${row.user_id}, thread ${row.thread_id})`, check.message(row));
  }
  const calls = db.prepare('SELECT user_id, thread_id, tool_call_id, args, outcome FROM tool_calls');
  for (const row of calls.iterate() as Iterable<{ user_id: string; thread_id: string; tool_call_id: string; args: string; outcome: string }>) {
    report.add(`tool_calls (user ${row.user_id}, thread ${row.thread_id}, tool_call_id ${row.tool_call_id})`, check.toolCall(row));
  }
  return report;
}

export function nowIso(): string {
  return isoOfMs(Date.now());
}
