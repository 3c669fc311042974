import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { describePgUrl, isPostgresUrl, pgUrlHasPassword, unusableDbTarget } from '../store/pg/url.js';

const DEFAULT_DB_FILE = 'toolgate.db';

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
  return join(homeFolder(env), '.local', 'share', 'toolgate');
}

/** The user's home: $HOME when absolute, else the account's. An empty or relative HOME never makes the data folder relative. */
function homeFolder(env: NodeJS.ProcessEnv): string {
  const account = () => {
    try {
      return userInfo().homedir;
    } catch {
      return '';
    }
  };
  for (const candidate of [env.HOME, homedir(), account()]) if (candidate && isAbsolute(candidate)) return candidate;
  throw new FolderError('no home folder to keep the data folder in: set TOOLGATE_HOME (or HOME)');
}

/**
 * The database: `--db` wins over TOOLGATE_DB, then `toolgate.db` in the
 * default data folder. A file path is made absolute; a `postgres://` URL is
 * kept as it is (contract §12).
 */
export function resolveDbPath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const named = flag ?? env.TOOLGATE_DB;
  const unusable = named ? unusableDbTarget(named) : null;
  if (unusable) throw new FolderError(`${flag === undefined ? 'TOOLGATE_DB' : '--db'}: ${unusable}`);
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
function withPgPassword(url: string, env: NodeJS.ProcessEnv = process.env): string {
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
 * The folder that holds the dev secret and the credential signing key: always
 * the data folder, whatever `--db` names — a `dev-token` minted once works with
 * every `serve --dev`, and a database moved elsewhere keeps the same keys.
 */
export function keysDir(env: NodeJS.ProcessEnv = process.env): string {
  return defaultDataDir(env);
}

/** A path's first ancestor that exists (the path itself when it does). */
function existingAncestor(path: string): string {
  let dir = path;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/**
 * Makes sure `dir` can hold files, before anything is written: a regular file
 * in the way is a mistake the person must fix (`what` names the setting that
 * chose the folder). Returns the folder it had to create, if any, so the caller
 * can say so — a mistyped path must not go unnoticed.
 */
export function ensureFolder(dir: string, what: string): string | null {
  const found = existingAncestor(dir);
  if (!statSync(found).isDirectory()) throw new FolderError(`${what}: ${found} is a file, not a folder — choose another path`);
  if (found === dir) return null;
  // One level at a time, not `recursive: true`: Node's recursive mkdir never returns under /proc (`--db /proc/x/t.db` hung).
  const missing: string[] = [];
  for (let d = dir; d !== found; d = dirname(d)) missing.unshift(d);
  for (const d of missing) {
    try {
      mkdirSync(d, { mode: 0o700 });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      const why = code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'EROFS' ? 'a read-only file system' : code === 'ENOENT' ? 'folders cannot be made there' : (code ?? (err as Error).message);
      throw new FolderError(`${what}: cannot create the folder ${d} (${why}) — choose another path`);
    }
  }
  return dir;
}

/** A folder for the database or the keys cannot be used (a file in the way, no permission). */
export class FolderError extends Error {
  override name = 'FolderError';
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
    ensureFolder(dirname(path), 'the data folder (TOOLGATE_HOME)');
    try {
      writeFileSync(path, make(), { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new FolderError(`cannot write ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): check the data folder's permissions or set TOOLGATE_HOME`);
    }
  }
  try {
    chmodSync(path, 0o600);
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new FolderError(`cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): check its permissions or set TOOLGATE_HOME`);
  }
}
