import type Database from 'better-sqlite3';
import type { Db } from '../database.js';
import { StoreConflictError } from '../store.js';
import { isoOfMs } from '../iso-time.js';

/**
 * Prepared statements cached per connection: each SQL text is compiled once
 * for the life of the connection (preparing is most of a small query's cost).
 */
export class Statements {
  private readonly cache = new Map<string, Database.Statement>();
  constructor(readonly db: Db) {}

  get(sql: string): Database.Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }
}

/** Runs a write, turning a unique-key violation into the boundary's StoreConflictError. */
export function uniquely<T>(constraint: string, write: () => T): T {
  try {
    return write();
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw new StoreConflictError(constraint);
    throw err;
  }
}

let lastMs = NaN;
let lastIso = '';

/** Now as an ISO 8601 string; a call's several rows are written within the same millisecond, formatted once. */
export function nowIso(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = isoOfMs(ms);
  }
  return lastIso;
}
