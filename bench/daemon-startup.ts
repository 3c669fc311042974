/**
 * toolgate's own start-up, as a host sees it: a fresh `toolgate` process per
 * probe, from its bundle (dist/daemon, what ships) and from dist/src
 * (TOOLGATE_UNBUNDLED=1), beside a bare `node -e 0`. Interleaved rounds,
 * medians. `serve --stdio` is timed from the spawn to the answer of its
 * `initialize` (what a host waits for), and its resident memory read then.
 */
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { median } from './stats.js';
import { childEnv, memoryOf, REPO_ROOT, tempDir, TOOLGATE_BIN } from './env.js';
import { spawnStdioPeer } from './stdio-peer.js';
import { toolgateEnv } from './targets/toolgate.js';

export interface DaemonStartupRow {
  name: string;
  /** Median wall time, ms. */
  wall: number;
  /** Median resident memory once `initialize` is answered (serve probes only), bytes. */
  rss?: number;
}

function timeExit(args: string[], env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(process.execPath, args, { env: childEnv(env), stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(performance.now() - t) : reject(new Error(`${args.join(' ')} exited ${code}`))));
  });
}

async function timeInitialize(dir: string, env: Record<string, string>): Promise<{ ms: number; rss: number }> {
  const t = performance.now();
  const peer = spawnStdioPeer([TOOLGATE_BIN, 'serve', '--stdio', '--db', join(dir, 'startup.db')], { ...toolgateEnv(dir), ...env });
  try {
    await peer.rpc.sendRequest('initialize', { protocol_version: '1', client_info: { name: 'toolgate-bench', version: '1' } });
    const ms = performance.now() - t;
    return { ms, rss: memoryOf(peer.proc.pid!).rss };
  } catch (err) {
    throw new Error(`toolgate did not start: ${(err as Error).message}\n${peer.stderr().slice(-2000)}`, { cause: err });
  } finally {
    await peer.stop();
  }
}

/**
 * The launcher runs dist/src when the bundle is older than a file it was built from (bin/toolgate.mjs):
 * a `tsc` alone before this bench would time dist/src twice. Refused here instead.
 */
function assertBundleCurrent(): void {
  const built = statSync(join(REPO_ROOT, 'dist', 'daemon', 'toolgate.cjs')).mtimeMs;
  const inputs = JSON.parse(readFileSync(join(REPO_ROOT, 'dist', 'daemon', 'inputs.json'), 'utf8')) as string[];
  const newer = inputs.find((f) => statSync(join(REPO_ROOT, f)).mtimeMs > built);
  if (newer) throw new Error(`the daemon bundle is older than ${newer}: run npm run build (npm run bench does)`);
}

export async function runDaemonStartup(rounds: number): Promise<DaemonStartupRow[]> {
  assertBundleCurrent();
  const dir = tempDir('toolgate-bench-daemon-startup-');
  const bundle = {};
  const src = { TOOLGATE_UNBUNDLED: '1' };
  const probes: Array<{ name: string; run: () => Promise<{ ms: number; rss?: number }> }> = [
    { name: 'node -e 0', run: async () => ({ ms: await timeExit(['-e', '0'], {}) }) },
    { name: '`toolgate --version`, bundle', run: async () => ({ ms: await timeExit([TOOLGATE_BIN, '--version'], bundle) }) },
    { name: '`toolgate --version`, dist/src', run: async () => ({ ms: await timeExit([TOOLGATE_BIN, '--version'], src) }) },
    { name: '`serve --stdio` → `initialize` answered, bundle', run: () => timeInitialize(dir, bundle) },
    { name: '`serve --stdio` → `initialize` answered, dist/src', run: () => timeInitialize(dir, src) },
  ];
  const samples = probes.map(() => ({ ms: [] as number[], rss: [] as number[] }));
  // One unmeasured round first: the database and keys are created by the first serve.
  for (const p of probes) await p.run();
  for (let r = 0; r < rounds; r++) {
    for (const [i, p] of probes.entries()) {
      const s = await p.run();
      samples[i]!.ms.push(s.ms);
      if (s.rss !== undefined) samples[i]!.rss.push(s.rss);
    }
  }
  return probes.map((p, i) => ({ name: p.name, wall: median(samples[i]!.ms), ...(samples[i]!.rss.length ? { rss: median(samples[i]!.rss) } : {}) }));
}
