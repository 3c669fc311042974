import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export const DEFAULT_DB = 'data/toolgate.db';

/** The database file: `--db` wins over TOOLGATE_DB, then the default. */
export function resolveDbPath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(flag ?? env.TOOLGATE_DB ?? DEFAULT_DB);
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
