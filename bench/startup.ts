/**
 * Part of entry (e): where project-cli's start-up goes. Each probe is a fresh
 * process (interleaved rounds, medians); a probe's cost is its wall time
 * minus that of an empty ES module, which is what `bin/project-cli.mjs` is
 * before it loads anything.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { median } from './stats.js';
import { BENCH_DIST, childEnv, PROJECT_CLI_BIN, REPO_ROOT, tempDir } from './env.js';
import { calendarInput } from './anchors/calendar-input.js';
import { issueClaims, loadSigningKey, signCredential } from '../src/auth/credential-issuer.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';

export interface StartupRow {
  name: string;
  wall: number;
  /** Over the empty ES module probe. */
  extra: number;
}

function timeSpawn(args: string[], input = '', env: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(process.execPath, args, { env: childEnv(env), stdio: ['pipe', 'ignore', 'ignore'] });
    child.stdin.end(input);
    child.on('error', reject);
    child.on('close', () => resolve(performance.now() - t));
  });
}

/**
 * A database with a recorded key and an unbound credential for it, as the
 * daemon would hand a child (an unbound one, so that every run creates an
 * event instead of answering from a call record). The store stays open, as
 * the daemon's does: the CLI is then never the last connection, whose close
 * would checkpoint the WAL.
 */
async function wholeCall(dir: string) {
  const key = await loadSigningKey({}, dir);
  const db = join(dir, 'startup.db');
  const store = openSqliteStore(db);
  await store.transaction((tx) => tx.credentialKeys.record(key.kid, key.publicJwk as Record<string, unknown>));
  const { claims } = issueClaims({ userId: 'bench', actions: ['calendar.create'], source: 'session', jobId: null, call: null });
  return { env: { PROJECT_CLI_CREDENTIAL: await signCredential(claims, key), TOOLGATE_DB: db }, close: () => store.close() };
}

export async function runStartup(rounds: number): Promise<StartupRow[]> {
  const probe = join(BENCH_DIST, 'startup-probe.js');
  const dir = tempDir('toolgate-bench-startup-');
  const call = await wholeCall(dir);
  const input = JSON.stringify(calendarInput(0));
  const variants: Array<[string, string[], string, Record<string, string>?]> = [
    ['node -e 0', ['-e', '0'], ''],
    ['empty ES module (the launcher alone)', [probe, 'none'], ''],
    ['node:crypto (sha256, randomUUID)', [probe, 'crypto'], ''],
    ['WebCrypto (jose’s verify path; the CLI no longer loads it)', [probe, 'webcrypto'], ''],
    ['better-sqlite3 (require + open :memory:)', [probe, 'sqlite'], ''],
    ['zod from node_modules (ESM tree; the bundle replaces it)', [probe, 'zod'], ''],
    ['jose from node_modules (ESM tree; no longer in the CLI)', [probe, 'jose'], ''],
    ['the CLI bundle: read + compile from cache + evaluate', [probe, 'bundle', REPO_ROOT], ''],
    ['project-cli, no credential (load, refuse, exit 3)', [PROJECT_CLI_BIN, 'calendar', 'create'], '{}'],
    ['project-cli calendar.create, whole call (verify, validate, insert, commit)', [PROJECT_CLI_BIN, 'calendar', 'create'], input, call.env],
  ];
  const samples = variants.map(() => [] as number[]);
  try {
    for (let r = 0; r < rounds; r++) {
      for (const [v, [, args, stdin, env]] of variants.entries()) samples[v]!.push(await timeSpawn(args, stdin, env));
    }
  } finally {
    await call.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const base = median(samples[1]!);
  return variants.map(([name], v) => ({ name, wall: median(samples[v]!), extra: median(samples[v]!) - base }));
}
