/**
 * A daemon started the way a user starts it through npm — `npx toolgate serve`
 * and `npm run inspector` in a clone — is gone after a SIGTERM to the npm
 * process. npm runs the bin through `sh -c` and does not pass the signal on,
 * so the daemon used to keep running under init (issue #42 item 10); it now
 * stops as on SIGTERM when the npm process that launched it is gone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, tempDir } from '../helpers/repo.js';
import { waitFor } from '../helpers/wait-for.js';

const NPM_SKIP = spawnSync('npx', ['--version'], { encoding: 'utf8' }).status === 0 ? undefined : 'npx is not on PATH';

/** `[pid, ppid, argv]` of every process, read from /proc. */
function processes(): Array<{ pid: number; ppid: number; argv: string[]; state: string }> {
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean);
      out.push({ pid: Number(name), ppid: Number(ppid), argv, state: state! });
    } catch {
      // gone while we looked
    }
  }
  return out;
}

/** The daemon among the descendants of `root`: the node process running `bin/toolgate.mjs serve`. */
function daemonUnder(root: number): number | undefined {
  const all = processes();
  const mine = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (!mine.has(p.pid) && mine.has(p.ppid)) {
        mine.add(p.pid);
        grew = true;
      }
    }
  }
  return all.find((p) => mine.has(p.pid) && p.pid !== root && /(^|\/)node$/.test(p.argv[0] ?? '') && p.argv.some((a) => /toolgate(\.mjs)?$/.test(a)) && p.argv.includes('serve'))?.pid;
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** `said`: the daemon's log line saying why it stopped. */
async function sigtermTheLauncher(command: string, args: string[], said: RegExp): Promise<void> {
  const dir = tempDir();
  const env: NodeJS.ProcessEnv = { ...process.env, TOOLGATE_HOME: dir, npm_config_cache: join(dir, 'npm-cache'), npm_config_update_notifier: 'false' };
  for (const k of Object.keys(env)) if (k.startsWith('npm_') && !k.startsWith('npm_config_')) delete env[k]; // as from a shell, not from npm test
  delete env['TOOLGATE_BEARER_SECRET'];
  const npm = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let ended = false;
  npm.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  npm.stderr.on('end', () => (ended = true));
  npm.stdout.resume();
  let daemon: number | undefined;
  try {
    await waitFor(() => stderr.includes('"listening"'), () => `the daemon to listen; stderr: ${stderr}`, 60_000);
    daemon = await waitFor(() => daemonUnder(npm.pid!), 'the daemon among the launcher’s descendants');
    npm.kill('SIGTERM');
    await waitFor(() => !alive(daemon!), () => `the daemon (pid ${daemon}) to be gone after SIGTERM to ${command}; stderr: ${stderr}`, 20_000);
    // Every process that held the pipe is gone once it ends: the daemon's last lines are all in.
    await waitFor(() => ended, () => `the launcher's stderr to end; stderr: ${stderr}`);
    assert.match(stderr, said);
    assert.match(stderr, /"msg":"stopped","exit_code":0/);
  } finally {
    if (daemon !== undefined && alive(daemon)) process.kill(daemon, 'SIGKILL');
    if (npm.exitCode === null) npm.kill('SIGKILL');
  }
}

test('SIGTERM to `npx toolgate serve` ends the daemon, not only npx', { skip: NPM_SKIP, timeout: 120_000 }, async () => {
  await sigtermTheLauncher('npx', ['--offline', 'toolgate', 'serve', '--ws', '--port', '0', '--dev', '--db', join(tempDir(), 't.db')], /the npm process that launched the daemon is gone/);
});

test('SIGTERM to `npm run inspector` ends the daemon, not only npm', { skip: NPM_SKIP, timeout: 120_000 }, async () => {
  await sigtermTheLauncher('npm', ['run', 'inspector', '--', '--port', '0', '--db', join(tempDir(), 't.db')],
    // The launcher script (its parent, npm's shell, gone) passes SIGTERM on to the daemon it started.
    /"msg":"signal received","signal":"SIGTERM"/,
  );
});
