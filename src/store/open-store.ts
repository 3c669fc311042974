import type { OpenStore, Store, StoreOptions } from './store.js';
import { DatabaseOpenError } from './database.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/**
 * Opens the store a target names: a `postgres://` URL (the PostgreSQL
 * engine, not built yet on this branch) or a SQLite file path.
 */
export const openStore: OpenStore = async (target: string, opts: StoreOptions = {}): Promise<Store> => {
  if (POSTGRES_URL.test(target)) throw new DatabaseOpenError('PostgreSQL is not supported by this build');
  return openSqliteStore(target, opts);
};
