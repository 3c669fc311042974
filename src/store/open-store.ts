import type { Store, StoreOptions } from './store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import { isPostgresUrl, unusableDbTarget } from './pg/url.js';

export { unusableDbTarget };
import { DatabaseOpenError } from './database.js';

/**
 * Opens the store a target names: a `postgres://` / `postgresql://` URL
 * selects the PostgreSQL engine (loaded only then), anything else is a
 * SQLite file path. (Fits the boundary's `OpenStore`, plus an optional log.)
 */
export const openStore = async (target: string, opts: StoreOptions & { log?: StoreLog } = {}): Promise<Store> => {
  const unusable = unusableDbTarget(target);
  if (unusable) throw new DatabaseOpenError(unusable);
  if (isPostgresUrl(target)) {
    const { openPgStore } = await import('./pg/pg-store.js');
    return openPgStore(target, opts);
  }
  return openSqliteStore(target, opts);
};

/** Where an engine reports connection trouble it recovers from (PostgreSQL reconnects). */
export interface StoreLog {
  log(level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>): void;
}
