import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describePgUrl, isPostgresUrl, pgUrlHasPassword } from '../store/pg/url.js';

export const DEFAULT_DB_FILE = 'toolgate.db';

/**
 * The data folder when no database is named: TOOLGATE_HOME, else
 * $XDG_DATA_HOME/toolgate, else ~/.local/share/toolgate. Never relative to
 * the working directory — an MCP host may start the daemon from `/`, and it
 * must find the same database and dev secret as from the repository.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TOOLGATE_HOME) return resolve(env.TOOLGATE_HOME);
  // XDG: a relative XDG_DATA_HOME is invalid and ignored.
  const xdg = env.XDG_DATA_HOME;
  if (xdg && xdg.startsWith('/')) return join(xdg, 'toolgate');
  return join(env.HOME || homedir(), '.local', 'share', 'toolgate');
}

/**
 * The database: `--db` wins over TOOLGATE_DB, then `toolgate.db` in the
 * default data folder. A file path is made absolute; a `postgres://` URL is
 * kept as it is (contract §12).
 */
export function resolveDbPath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const named = flag ?? env.TOOLGATE_DB;
  if (named && isPostgresUrl(named)) return withPgPassword(named, env);
  return named ? resolve(named) : join(defaultDataDir(env), DEFAULT_DB_FILE);
}

/**
 * A `postgres://` URL without a password takes libpq's `PGPASSWORD` from the
 * environment, so the password can stay out of the URL (and of argv, where
 * `ps` shows it to every user of the machine). The URL carries it from here
 * on — into the environment of the `project-cli` children, never into argv
 * or a log line (logs show `postgres://user:***@…`).
 */
export function withPgPassword(url: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!env.PGPASSWORD) return url;
  try {
    const u = new URL(url);
    if (u.password) return url;
    u.password = encodeURIComponent(env.PGPASSWORD);
    return u.toString();
  } catch {
    return url; // not a URL: opening it reports the problem
  }
}

/** Whether `--db` itself holds a database password (visible in `ps`). */
export function passwordInArgv(flag: string | undefined): boolean {
  return !!flag && isPostgresUrl(flag) && pgUrlHasPassword(flag);
}

/**
 * Keys and dev secrets live beside the database they belong to; with
 * PostgreSQL (no file) in the default data folder.
 */
export function dataDirOf(dbPath: string, env: NodeJS.ProcessEnv = process.env): string {
  return isPostgresUrl(dbPath) ? defaultDataDir(env) : dirname(dbPath);
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
