/**
 * The daemon ships as one CommonJS script with a V8 code cache
 * (scripts/bundle-daemon.mjs → dist/daemon/toolgate.cjs), and bin/toolgate.mjs
 * runs it: seen from outside, by the module URLs a spawned daemon resolves
 * (test/helpers/module-log.ts) — the launcher's first import is the bundle's
 * start-up-heap.js, or dist/src's, and the script itself is compiled from a
 * file, not resolved as a module. The rest of the e2e suites drive the bundle
 * through every transport; this one checks that it is the bundle they drive,
 * that its lazy parts load (the WAL checkpoint thread, MCP on stdio), that
 * V8 takes the build's code cache, that TOOLGATE_UNBUNDLED=1 runs the same
 * program from dist/src, and that a bundle older than a dist/src file it was
 * built from is not run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openSession, startHost } from '../helpers/host.js';
import { REPO_ROOT, TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { mintBearer, TEST_BEARER_SECRET } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait-for.js';
import type { ToolResponse } from '../../src/protocol/index.js';

const PRELOAD = `--import=${pathToFileURL(join(REPO_ROOT, 'dist', 'test', 'helpers', 'module-log.js')).href}`;
const DIST_SRC = pathToFileURL(join(REPO_ROOT, 'dist', 'src')).href + '/';
const DIST_DAEMON = pathToFileURL(join(REPO_ROOT, 'dist', 'daemon')).href + '/';

/** The file: URLs of the project's own modules a log holds (not Node's built-ins or the preload). */
function ownModules(log: string): string[] {
  const root = pathToFileURL(REPO_ROOT).href + '/';
  return [...new Set(readFileSync(log, 'utf8').split('\n').filter((u) => u.startsWith(root) && !u.includes('/dist/test/')))];
}

test('bin/toolgate.mjs serves from dist/daemon: a stdio session past the first WAL checkpoint loads no module of dist/src', async () => {
  assert.ok(existsSync(join(REPO_ROOT, 'dist', 'daemon', 'toolgate.cjs')), 'npm run build wrote the bundle');
  const log = join(tempDir('toolgate-modules-'), 'modules.log');
  const host = await startHost({ args: ['--executor', 'inprocess'], env: { NODE_OPTIONS: PRELOAD, MODULE_LOG: log } });
  try {
    const s = await openSession(host, await mintBearer('bundle-user'));
    const before = statSync(host.dbPath).size;
    // The checkpoint thread starts at the 64th commit and moves the WAL's pages into the database file.
    for (let i = 0; i < 70; i++) {
      const r = await host.request<ToolResponse>('tool/invoke', {
        session_id: s.session_id, thread_id: 'bundle', tool_call_id: `c${i}`,
        args: { module: 'memory', method: 'update', input: { key: `k${i % 5}`, content: `v${i}` } },
      });
      assert.equal(r.status, 'success', JSON.stringify(r));
    }
    await waitFor(() => ownModules(log).includes(`${DIST_DAEMON}checkpoint-worker.js`) || undefined, () => `the checkpoint thread's module in:\n${ownModules(log).join('\n')}`);
    await waitFor(() => statSync(host.dbPath).size > before || undefined, 'a checkpoint grew the database file');
  } finally {
    assert.equal(await host.stop(), 0, host.stderr());
  }
  assert.doesNotMatch(host.stderr(), /WAL checkpoint failed|toolgate crashed/);
  const own = ownModules(log);
  assert.ok(own.includes(`${DIST_DAEMON}start-up-heap.js`), `the bundle's launcher path ran:\n${own.join('\n')}`);
  assert.deepEqual(own.filter((u) => u.startsWith(DIST_SRC)), [], 'nothing of dist/src');
});

/** What the launcher compiled, by test/helpers/code-cache-probe.ts: one line per vm.Script. */
function scriptsCompiled(args: string[], env: Record<string, string>, launcher = TOOLGATE_BIN): Array<{ filename: string; cached: boolean; rejected: boolean | null }> {
  const log = join(tempDir('toolgate-code-cache-'), 'scripts.log');
  const probe = `--import=${pathToFileURL(join(REPO_ROOT, 'dist', 'test', 'helpers', 'code-cache-probe.js')).href}`;
  const r = spawnSync(process.execPath, [launcher, ...args], { env: { PATH: process.env.PATH ?? '', ...env, NODE_OPTIONS: probe, CODE_CACHE_LOG: log }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { filename: string; cached: boolean; rejected: boolean | null }) : [];
}

test("the launcher compiles the bundle from the build's code cache, and V8 takes it", () => {
  const scripts = scriptsCompiled(['--version'], { TOOLGATE_HOME: tempDir() });
  assert.deepEqual(scripts, [{ filename: 'toolgate/dist/daemon/toolgate.cjs', cached: true, rejected: false }]);
  // V8 checks only the source's length: a script changed after its cache was written compiles without it.
  const pkg = tempDir('toolgate-patched-');
  for (const part of ['bin', 'dist/daemon', 'package.json']) cpSync(join(REPO_ROOT, part), join(pkg, part), { recursive: true, preserveTimestamps: true });
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(pkg, 'node_modules'));
  symlinkSync(join(REPO_ROOT, 'dist', 'src'), join(pkg, 'dist', 'src'));
  // A checkout (its sources are there): the launcher reads file times only in one.
  symlinkSync(join(REPO_ROOT, 'src'), join(pkg, 'src'));
  const later = new Date(statSync(join(pkg, 'dist', 'daemon', 'toolgate.cjs.cache')).mtimeMs + 60_000);
  utimesSync(join(pkg, 'dist', 'daemon', 'toolgate.cjs'), later, later);
  assert.deepEqual(scriptsCompiled(['--version'], { TOOLGATE_HOME: tempDir() }, join(pkg, 'bin', 'toolgate.mjs')), [{ filename: 'toolgate/dist/daemon/toolgate.cjs', cached: false, rejected: null }]);
});

/** A copy of `file` (a code cache the build wrote) whose stamp names another Node 20 release, V8's bytes kept. */
function stampedByAnotherNode(file: string): void {
  const bytes = readFileSync(file);
  const end = bytes.indexOf(0x0a);
  const stamp = bytes.subarray(0, end).toString('latin1');
  assert.ok(stamp.startsWith('toolgate-v8-code-cache ') && stamp.includes(`"node":"${process.version}"`), `the build stamped ${file} with this node: ${stamp}`);
  const other = process.version === 'v20.16.0' ? 'v20.20.2' : 'v20.16.0';
  writeFileSync(file, Buffer.concat([Buffer.from(stamp.replace(`"node":"${process.version}"`, `"node":"${other}"`), 'latin1'), bytes.subarray(end)]));
}

// Every Node 20 release reports V8 11.3.244.8, so V8 takes a cache another release wrote, and crashed on it
// (measured: a build on 20.20.2, then `toolgate --version` and `project-cli --help` on 20.16.0, both a
// segmentation fault). The launchers hand V8 only a cache stamped by their own node (bin/code-cache.cjs).
test('a code cache another node wrote is never handed to V8: the daemon and project-cli compile without it', () => {
  const pkg = tempDir('toolgate-other-node-');
  for (const part of ['bin', 'dist/daemon', 'dist/project-cli.bundle.cjs', 'dist/project-cli.bundle.cjs.cache', 'package.json']) {
    cpSync(join(REPO_ROOT, part), join(pkg, part), { recursive: true, preserveTimestamps: true });
  }
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(pkg, 'node_modules'));
  symlinkSync(join(REPO_ROOT, 'dist', 'src'), join(pkg, 'dist', 'src'));
  // The build's own caches, from this node, are taken (the copy is the build as it is).
  assert.deepEqual(scriptsCompiled(['--version'], { TOOLGATE_HOME: tempDir() }, join(pkg, 'bin', 'toolgate.mjs')), [{ filename: 'toolgate/dist/daemon/toolgate.cjs', cached: true, rejected: false }]);
  assert.deepEqual(scriptsCompiled(['--help'], { TOOLGATE_HOME: tempDir() }, join(pkg, 'bin', 'project-cli.cjs')), [{ filename: join(pkg, 'dist', 'project-cli.bundle.cjs'), cached: true, rejected: false }]);
  stampedByAnotherNode(join(pkg, 'dist', 'daemon', 'toolgate.cjs.cache'));
  stampedByAnotherNode(join(pkg, 'dist', 'project-cli.bundle.cjs.cache'));
  assert.deepEqual(scriptsCompiled(['--version'], { TOOLGATE_HOME: tempDir() }, join(pkg, 'bin', 'toolgate.mjs')), [{ filename: 'toolgate/dist/daemon/toolgate.cjs', cached: false, rejected: null }]);
  assert.deepEqual(scriptsCompiled(['--help'], { TOOLGATE_HOME: tempDir() }, join(pkg, 'bin', 'project-cli.cjs')), [{ filename: join(pkg, 'dist', 'project-cli.bundle.cjs'), cached: false, rejected: null }]);
});

test('serve --mcp from the bundle loads its MCP part and lists the one tool', async () => {
  const log = join(tempDir('toolgate-modules-'), 'modules.log');
  const dir = tempDir();
  const messages = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  ];
  const r = spawnSync(process.execPath, [TOOLGATE_BIN, 'serve', '--mcp', '--db', join(dir, 'm.db')], {
    input: messages.map((m) => JSON.stringify(m)).join('\n') + '\n',
    env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: dir, TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_MCP_TOKEN: await mintBearer('mcp-bundle'), NODE_OPTIONS: PRELOAD, MODULE_LOG: log },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(r.status, 0, r.stderr);
  const tools = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id?: number; result?: { tools?: Array<{ name: string }> } }).find((m) => m.id === 2);
  assert.deepEqual(tools?.result?.tools?.map((t) => t.name), ['project_cli']);
  const own = ownModules(log);
  assert.ok(own.includes(`${DIST_DAEMON}start-up-heap.js`), own.join('\n'));
  assert.deepEqual(own.filter((u) => u.startsWith(DIST_SRC)), []);
});

test('a command that does not serve runs from the bundle too: --version, --help and a usage mistake', () => {
  const dir = tempDir('toolgate-modules-');
  const env = { PATH: process.env.PATH ?? '', TOOLGATE_HOME: dir, NODE_OPTIONS: PRELOAD };
  for (const [i, args] of [['--version'], ['--help'], ['serve', '--websocket']].entries()) {
    const log = join(dir, `${i}.log`);
    const r = spawnSync(process.execPath, [TOOLGATE_BIN, ...args], { env: { ...env, MODULE_LOG: log }, encoding: 'utf8' });
    assert.equal(r.status, args[0] === 'serve' ? 2 : 0, r.stderr);
    const own = ownModules(log);
    assert.ok(own.includes(`${DIST_DAEMON}start-up-heap.js`), own.join('\n'));
    assert.deepEqual(own.filter((u) => u.startsWith(DIST_SRC)), [], `${args.join(' ')}: nothing of dist/src`);
    // The daemon's parts run when a command imports them (esbuild's lazy module initializers): none opened a database.
    assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.db')), [], `${args.join(' ')} opened no database`);
  }
});

test('TOOLGATE_UNBUNDLED=1 runs dist/src, and both say the same', async () => {
  const log = join(tempDir('toolgate-modules-'), 'modules.log');
  const env = { PATH: process.env.PATH ?? '', TOOLGATE_HOME: tempDir() };
  const bundled = spawnSync(process.execPath, [TOOLGATE_BIN, '--help'], { env, encoding: 'utf8' });
  const unbundled = spawnSync(process.execPath, [TOOLGATE_BIN, '--help'], { env: { ...env, TOOLGATE_UNBUNDLED: '1', NODE_OPTIONS: PRELOAD, MODULE_LOG: log }, encoding: 'utf8' });
  assert.equal(bundled.status, 0, bundled.stderr);
  assert.equal(unbundled.status, 0, unbundled.stderr);
  assert.equal(unbundled.stdout, bundled.stdout);
  const own = ownModules(log);
  assert.ok(own.includes(`${DIST_SRC}app/cli.js`), own.join('\n'));
  assert.deepEqual(own.filter((u) => u.startsWith(DIST_DAEMON)), [], 'nothing of the bundle');
});

test('a bundle older than one of the dist/src files it was built from is not run: dist/src is', () => {
  // A copy of the built package, so that touching a file cannot change what the other suites run.
  const pkg = tempDir('toolgate-stale-');
  for (const part of ['bin', 'dist/daemon', 'dist/src', 'package.json']) cpSync(join(REPO_ROOT, part), join(pkg, part), { recursive: true, preserveTimestamps: true });
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(pkg, 'node_modules'));
  // A checkout (its sources are there): the launcher reads file times only in one.
  symlinkSync(join(REPO_ROOT, 'src'), join(pkg, 'src'));
  const version = (log: string) => {
    const r = spawnSync(process.execPath, [join(pkg, 'bin', 'toolgate.mjs'), '--version'], { env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: PRELOAD, MODULE_LOG: log }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const urls = readFileSync(log, 'utf8');
    return { bundle: urls.includes(`${pathToFileURL(join(pkg, 'dist', 'daemon')).href}/start-up-heap.js`), src: urls.includes(`${pathToFileURL(join(pkg, 'dist', 'src')).href}/app/cli.js`) };
  };
  const dir = tempDir('toolgate-modules-');
  assert.deepEqual(version(join(dir, 'fresh.log')), { bundle: true, src: false }, 'a current bundle runs');
  // What `tsc` alone after a build does: a file the bundle was built from is newer than the bundle.
  const later = new Date(statSync(join(pkg, 'dist', 'daemon', 'toolgate.cjs')).mtimeMs + 60_000);
  utimesSync(join(pkg, 'dist', 'src', 'auth', 'user-auth.js'), later, later);
  assert.deepEqual(version(join(dir, 'stale.log')), { bundle: false, src: true }, 'a stale bundle is passed over');
});
