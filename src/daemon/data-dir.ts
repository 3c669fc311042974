import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

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

/** The database file: `--db` wins over TOOLGATE_DB, then `toolgate.db` in the default data folder. */
export function resolveDbPath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const named = flag ?? env.TOOLGATE_DB;
  return named ? resolve(named) : join(defaultDataDir(env), DEFAULT_DB_FILE);
}

/** Keys and dev secrets live beside the database they belong to. */
export function dataDirOf(dbPath: string): string {
  return dirname(dbPath);
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
