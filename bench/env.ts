/**
 * Where the bench's children start from: the repository, a temp folder, and
 * an environment without NODE_EXTRA_CA_CERTS (this machine sets it, and Node
 * then spends ~40 ms of every start loading certificates).
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!(existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'tsconfig.json')))) dir = dirname(dir);
  return dir;
})();

export const TOOLGATE_BIN = join(REPO_ROOT, 'bin', 'toolgate.mjs');
export const PROJECT_CLI_BIN = join(REPO_ROOT, 'bin', 'project-cli.mjs');
/** Compiled bench modules (this file's folder in dist/bench). */
export const BENCH_DIST = dirname(fileURLToPath(import.meta.url));

export const BEARER_SECRET = 'bench-bearer-secret-0123456789abcdef-0123';

export function tempDir(prefix = 'toolgate-bench-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** The environment a child starts with: only what it needs. */
export function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'LANG', 'TZ']) if (process.env[k] !== undefined) env[k] = process.env[k]!;
  return { ...env, ...extra };
}

/** Resident and peak resident set of a process, from /proc (Linux). */
export function memoryOf(pid: number): { rss: number; peak: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return { rss: Number.NaN, peak: Number.NaN };
  }
}
