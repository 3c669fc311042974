/**
 * Part of entry (e): where project-cli's start-up goes. Each probe is a fresh
 * process (interleaved rounds, medians); a probe's cost is its wall time
 * minus that of an empty ES module, which is what `bin/project-cli.mjs` is
 * before it loads anything.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { median } from './stats.js';
import { BENCH_DIST, childEnv, PROJECT_CLI_BIN, REPO_ROOT } from './env.js';

export interface StartupRow {
  name: string;
  wall: number;
  /** Over the empty ES module probe. */
  extra: number;
}

function timeSpawn(args: string[], input = ''): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(process.execPath, args, { env: childEnv(), stdio: ['pipe', 'ignore', 'ignore'] });
    child.stdin.end(input);
    child.on('error', reject);
    child.on('close', () => resolve(performance.now() - t));
  });
}

export async function runStartup(rounds: number): Promise<StartupRow[]> {
  const probe = join(BENCH_DIST, 'startup-probe.js');
  const variants: Array<[string, string[]]> = [
    ['node -e 0', ['-e', '0']],
    ['empty ES module (the launcher alone)', [probe, 'none']],
    ['node:crypto (sha256, randomUUID)', [probe, 'crypto']],
    ['WebCrypto (jose’s verify path; the CLI no longer loads it)', [probe, 'webcrypto']],
    ['better-sqlite3 (require + open :memory:)', [probe, 'sqlite']],
    ['zod from node_modules (ESM tree; the bundle replaces it)', [probe, 'zod']],
    ['jose from node_modules (ESM tree; no longer in the CLI)', [probe, 'jose']],
    ['the CLI bundle: read + compile from cache + evaluate', [probe, 'bundle', REPO_ROOT]],
    ['project-cli, no credential (load, refuse, exit 3)', [PROJECT_CLI_BIN, 'calendar', 'create']],
  ];
  const samples = variants.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    for (const [v, [, args]] of variants.entries()) samples[v]!.push(await timeSpawn(args, '{}'));
  }
  const base = median(samples[1]!);
  return variants.map(([name], v) => ({ name, wall: median(samples[v]!), extra: median(samples[v]!) - base }));
}
