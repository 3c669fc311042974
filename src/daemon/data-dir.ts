import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describePgUrl, isPostgresUrl } from '../store/pg/url.js';

export const DEFAULT_DB = 'data/toolgate.db';

/**
 * The database: `--db` wins over TOOLGATE_DB, then the default. A file path
 * is made absolute; a `postgres://` URL is kept as it is (contract §12).
 */
export function resolveDbPath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const target = flag ?? env.TOOLGATE_DB ?? DEFAULT_DB;
  return isPostgresUrl(target) ? target : resolve(target);
}

/**
 * Keys and dev secrets live beside the database they belong to; with
 * PostgreSQL (no file) in the data folder — `$TOOLGATE_HOME`, else
 * `$XDG_DATA_HOME/toolgate`, else `~/.local/share/toolgate`.
 */
export function dataDirOf(dbPath: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!isPostgresUrl(dbPath)) return dirname(dbPath);
  if (env.TOOLGATE_HOME) return resolve(env.TOOLGATE_HOME);
  if (env.XDG_DATA_HOME) return join(resolve(env.XDG_DATA_HOME), 'toolgate');
  return join(homedir(), '.local', 'share', 'toolgate');
}

/** The database as it may be shown in logs and messages: a URL without its password. */
export function describeDb(dbPath: string): string {
  return isPostgresUrl(dbPath) ? describePgUrl(dbPath) : dbPath;
}

/**
 * Reads a secret file, or creates it with `make()` and 0600 permissions.
 * `wx` makes creation atomic, so two processes starting together agree.
 */
export function readOrCreateSecretFile(path: string, make: () => string): string {
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    try {
      writeFileSync(path, make(), { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  chmodSync(path, 0o600);
  return readFileSync(path, 'utf8');
}
