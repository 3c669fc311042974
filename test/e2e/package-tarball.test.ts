/**
 * The package as a user gets it: `npm pack`, installed into an empty folder,
 * then `npx toolgate --help` and a stdio session (initialize, session/open
 * with a dev token, one tool/invoke) from there — nothing from the work tree
 * but the tarball and the runtime dependencies.
 *
 * Installing: `npm install --offline` cannot work here, because the
 * lockfile records no `resolved`/`integrity` and the npm cache lacks most
 * packuments. So the test does what npm's install does with a tarball —
 * unpack it to node_modules/toolgate, place its runtime dependency closure
 * (read from package-lock.json, at the same paths) and link its bins — with
 * the dependencies copied from this checkout's node_modules. Copying also
 * reuses better-sqlite3's native build instead of compiling it a second time.
 * Copies, not symlinks: a symlinked dependency would resolve its own imports
 * from the work tree and hide a missing runtime dependency.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { Client as McpClient } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { REPO_ROOT, tempDir } from '../helpers/repo.js';
import { TEST_BEARER_SECRET } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait-for.js';

interface LockEntry {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const work = tempDir('toolgate-pack-');
const app = join(work, 'app');
let files: string[] = [];
let tarball = '';
const env = { PATH: process.env.PATH ?? '', HOME: work, TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET };

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** A command run in the app folder to its end without blocking this process (the cases run at once). */
function run(cmd: string, args: string[], runEnv: Record<string, string>, timeout = 120_000): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: app, env: runEnv, encoding: 'utf8', timeout, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      resolve({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr });
    });
  });
}

/** `toolgate dev-token` of the installed package; it must succeed. */
async function devToken(user: string, db: string, runEnv: Record<string, string>): Promise<string> {
  const r = await run(join(app, 'node_modules', '.bin', 'toolgate'), ['dev-token', '--user', user, '--db', db], runEnv);
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

/** A case's own home (so its own data folder and dev secret): the cases run at once. */
function homeOf(name: string): Record<string, string> {
  const home = join(work, 'home', name);
  mkdirSync(home, { recursive: true });
  return { ...env, HOME: home };
}

/** Paths under node_modules of every package `roots` need at run time, resolved as Node would. */
function runtimeClosure(roots: readonly string[]): string[] {
  const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const find = (from: string, name: string): string | undefined => {
    for (let base = from; ; ) {
      const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
      if (lock.packages[candidate]) return candidate;
      if (!base) return undefined;
      const i = base.lastIndexOf('/node_modules/');
      base = i < 0 ? '' : base.slice(0, i);
    }
  };
  const seen = new Set<string>();
  const queue = roots.map((n) => find('', n) ?? assert.fail(`${n} is not in package-lock.json`));
  while (queue.length > 0) {
    const path = queue.pop()!;
    if (seen.has(path)) continue;
    seen.add(path);
    const entry = lock.packages[path]!;
    for (const name of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies })) {
      const optional = name in (entry.optionalDependencies ?? {}) || entry.peerDependenciesMeta?.[name]?.optional === true;
      const found = find(path, name);
      if (found) queue.push(found);
      else assert.ok(optional, `${name} (needed by ${path}) is not in package-lock.json`);
    }
  }
  return [...seen];
}

/**
 * better-sqlite3 as its install leaves it at run time: its JavaScript and
 * the compiled addon, not the SQLite sources and object files of the build.
 */
function wanted(pkg: string, rel: string): boolean {
  if (pkg !== 'node_modules/better-sqlite3' || rel === '') return true;
  if (/^(deps|src)(\/|$)/.test(rel)) return false;
  return !rel.startsWith('build') || rel === 'build' || rel === 'build/Release' || rel.endsWith('.node');
}

// One install, shared: every case below only reads the installed package (each daemon has its own
// database), so they run at once — most of their time is child processes starting, not CPU.
describe('the package as a user installs it', { concurrency: true }, () => {
  before(() => {
    const packed = JSON.parse(
      // --ignore-scripts: the suite runs after `npm run build`; prepack (the build again) would only slow it down.
      execFileSync('npm', ['pack', '--json', '--offline', '--ignore-scripts', '--pack-destination', work], { cwd: REPO_ROOT, env: { ...process.env, ...env }, encoding: 'utf8' }),
    ) as Array<{ filename: string; files: Array<{ path: string }> }>;
    files = packed[0]!.files.map((f) => f.path);
    tarball = join(work, packed[0]!.filename);
    const target = join(app, 'node_modules', 'toolgate');
    mkdirSync(target, { recursive: true });
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
    execFileSync('tar', ['xzf', join(work, packed[0]!.filename), '-C', target, '--strip-components=1']);

    const manifest = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; bin: Record<string, string> };
    for (const path of runtimeClosure(Object.keys(manifest.dependencies))) {
      const from = join(REPO_ROOT, path);
      cpSync(from, join(app, path), { recursive: true, dereference: true, filter: (src) => wanted(path, src.slice(from.length + 1)) });
    }
    const bin = join(app, 'node_modules', '.bin');
    mkdirSync(bin, { recursive: true });
    for (const [name, file] of Object.entries(manifest.bin)) symlinkSync(join('..', 'toolgate', file), join(bin, name));
  });

  after(() => {
    rmSync(work, { recursive: true, force: true });
  });

  test('the tarball ships what a user needs and no tests or source maps', () => {
    for (const needed of [
      'package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'toolgate.config.example.json', 'toolgate.config.example.yaml',
      'bin/toolgate.mjs', 'bin/not-ready.mjs', 'bin/code-cache.cjs', 'bin/project-cli.mjs', 'bin/project-cli.cjs', 'dist/project-cli.bundle.cjs', 'dist/project-cli.bundle.cjs.cache', 'dist/project-cli.snapshot.blob', 'dist/project-cli.snapshot.checked.json', 'dist/src/index.js', 'dist/src/index.d.ts',
      'dist/src/app/cli.js', 'dist/daemon/toolgate.cjs', 'dist/daemon/toolgate.cjs.cache', 'dist/daemon/start-up-heap.js', 'dist/daemon/checkpoint-worker.js', 'schemas/ui-schema.json', 'skills/calendar/SKILL.md', 'skills/calendar/examples.md',
      'docs/protocols/tool-protocol.md', 'dist/inspector/index.html', 'dist/inspector/inspector.js',
      'protocol/index.js', 'protocol/index.d.ts', 'schemas/protocol.json', 'schemas/tool-call.json', 'dist/src/conformance/conformance-command.js',
      'schemas/action-inputs.json', 'docs/protocols/conformance.md',
      'dist/src/client/index.js', 'dist/src/client/index.d.ts', 'dist/examples/demo-host/demo.js', 'dist/examples/stdio-host/main.js',
      'examples/README.md', 'docs/protocols/README.md', 'docs/protocols/transports.md', 'docs/protocols/data-flow.md',
      'dist/mcp-app/tool-card.html', 'assets/icons/toolgate.svg', 'assets/icons/project-cli-dark.svg',
    ]) {
      assert.ok(files.includes(needed), `ships ${needed}`);
    }
    assert.deepEqual(files.filter((f) => f.startsWith('dist/test/') || f.startsWith('test/') || f.endsWith('.map') || f.startsWith('dist/bench/')), []);
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules', 'toolgate', 'package.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(manifest.private, undefined, 'publishable');
    assert.equal(manifest.license, 'MIT');
    assert.ok(existsSync(join(app, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node')), 'the native build is reused');
  });

  // npm extracts a package with each file's time of extraction (not the tarball's), in the tarball's order,
  // where `.cache` comes before `.cjs` and `.cjs` before `.js`: GNU tar's --touch does the same. Read by
  // file times, every dist/src file then looked newer than the daemon's bundle, and its cache older than the
  // bundle, so an installed daemon never ran its bundle (bin/toolgate.mjs tells a checkout by its sources).
  test('unpacked as npm does (times of extraction), both launchers compile their bundle from its code cache', async () => {
    const target = join(app, 'node_modules', 'toolgate-as-npm');
    mkdirSync(target, { recursive: true });
    execFileSync('tar', ['xzf', tarball, '-C', target, '--strip-components=1', '--touch']);
    const probe = `--import=${pathToFileURL(join(REPO_ROOT, 'dist', 'test', 'helpers', 'code-cache-probe.js')).href}`;
    const compiled = async (launcher: string, args: string[]) => {
      const log = join(tempDir('toolgate-pack-probe-'), 'scripts.log');
      const r = await run(process.execPath, [launcher, ...args], { ...env, TOOLGATE_HOME: tempDir(), NODE_OPTIONS: probe, CODE_CACHE_LOG: log });
      assert.equal(r.status, 0, r.stderr);
      return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as unknown) : [];
    };
    assert.deepEqual(await compiled(join(target, 'bin', 'toolgate.mjs'), ['--version']), [{ filename: 'toolgate/dist/daemon/toolgate.cjs', cached: true, rejected: false }]);
    assert.deepEqual(await compiled(join(target, 'bin', 'project-cli.mjs'), ['--help']), [{ filename: join(target, 'dist', 'project-cli.bundle.cjs'), cached: true, rejected: false }]);
  });

  test('npx toolgate --help works from the installed package', async () => {
    const npxEnv = homeOf('npx');
    const [r, cli] = await Promise.all([run('npx', ['--offline', 'toolgate', '--help'], npxEnv), run('npx', ['--offline', 'project-cli', '--help'], npxEnv)]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^toolgate \d+\.\d+\.\d+ — /);
    assert.match(r.stdout, /^ {2}serve\s/m);
    assert.equal(cli.status, 0, cli.stderr);
    assert.match(cli.stdout, /^ {2}calendar create\s/m);
  });

  test('the package entry and its exports resolve', async () => {
    const script = "const m = await import('toolgate'); const p = (await import('toolgate/package.json', { with: { type: 'json' } })).default; " +
      "console.log(JSON.stringify({ version: m.VERSION, pkg: p.version, main: typeof m.main, actions: m.ACTION_NAMES.length }));";
    const r = await run(process.execPath, ['--input-type=module', '-e', script], env);
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { version: string; pkg: string; main: string; actions: number };
    assert.equal(out.version, out.pkg);
    assert.equal(out.main, 'function');
    assert.ok(out.actions > 0);
  });

  test('toolgate/protocol and toolgate/schemas/*.json resolve from the installed package, without zod', async () => {
    const script =
      "const p = await import('toolgate/protocol'); const s = (await import('toolgate/schemas/protocol.json', { with: { type: 'json' } })).default; " +
      "console.log(JSON.stringify({ methods: Object.keys(p.METHODS).length, version: p.PROTOCOL_VERSION, id: s.$id, same: p.schemas.protocol.$id === s.$id }));";
    const r = await run(process.execPath, ['--input-type=module', '-e', script], env);
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { methods: number; version: string; id: string; same: boolean };
    assert.ok(out.methods >= 11);
    assert.equal(out.version, '1');
    assert.equal(out.same, true);
  });

  test('toolgate/client from the installed package spawns the installed daemon and runs a session; toolgate demo runs from there too', async () => {
    const db = join(work, 'data', 'client.db');
    const clientEnv = homeOf('client');
    const token = await devToken('dana', db, clientEnv);
    const script =
      "import { ToolgateClient } from 'toolgate/client'; " +
      `const c = ToolgateClient.spawn({ args: ['--db', ${JSON.stringify(db)}], token: process.env.T }); ` +
      "await c.initialize(); const s = await c.openSession(); " +
      "const r = await s.invoke('packed', 'c1', { module: 'memory', method: 'read', input: {} }); " +
      'console.log(JSON.stringify({ user: s.info.user_id, status: r.status, code: await c.stop() }));';
    const [r, demo] = await Promise.all([
      run(process.execPath, ['--input-type=module', '-e', script], { ...clientEnv, T: token }),
      run(join(app, 'node_modules', '.bin', 'toolgate'), ['demo', '--db', join(work, 'data', 'demo.db')], homeOf('demo')),
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { user: 'dana', status: 'success', code: 0 });
    assert.equal(demo.status, 0, demo.stdout + demo.stderr);
    assert.match(demo.stdout, /history content === the text tool\/invoke returned/);
    // Outside the repository there is no `npm run inspector`: the hint is a command that works here.
    assert.doesNotMatch(demo.stdout, /npm run inspector/);
    assert.match(demo.stdout, /serve --ws --port 8787 --dev --db /);
  });

  test('serve --mcp from the installed package offers the tool card app and the icons', async () => {
    const db = join(work, 'data', 'mcp.db');
    const mcpEnv = homeOf('mcp');
    const token = await devToken('mara', db, mcpEnv);
    const client = new McpClient({ name: 'packed-host', version: '1' });
    await client.connect(new StdioClientTransport({
      command: join(app, 'node_modules', '.bin', 'toolgate'),
      args: ['serve', '--mcp', '--dev', '--db', db],
      cwd: app,
      env: { ...mcpEnv, TOOLGATE_MCP_TOKEN: token },
    }));
    try {
      const { tools } = await client.listTools();
      assert.equal((tools[0]!._meta as { ui?: { resourceUri?: string } }).ui?.resourceUri, 'ui://toolgate/tool-card.html');
      assert.equal(tools[0]!.icons?.length, 2);
      assert.equal(client.getServerVersion()?.icons?.length, 2);
      const { contents } = await client.readResource({ uri: 'ui://toolgate/tool-card.html' });
      assert.equal(contents[0]!.mimeType, 'text/html;profile=mcp-app');
      assert.match((contents[0] as { text: string }).text, /^<!doctype html>/i);
    } finally {
      await client.close();
    }
  });

  test('the systemd unit\'s install lines work: the tarball unpacked where ExecStart looks serves; a checkout builds before pruning', async () => {
    const unit = readFileSync(join(REPO_ROOT, 'examples', 'systemd', 'toolgate.service'), 'utf8');
    const comment = unit.split('\n').filter((l) => l.startsWith('#')).map((l) => l.replace(/^#\s*/, ''));
    // The checkout route: the build needs tsc and esbuild (dev dependencies), so nothing omits them before it.
    const build = comment.find((l) => l.includes('npm run build')) ?? assert.fail('a checkout route that builds');
    assert.doesNotMatch(build.slice(0, build.indexOf('npm run build')), /--omit=dev|--production/, build);
    // The tarball route, as written (with /opt/toolgate moved into a temporary folder).
    const opt = join(work, 'opt', 'toolgate');
    const state = join(work, 'var', 'lib', 'toolgate');
    const etc = join(work, 'etc', 'toolgate');
    const here = (text: string) => text.replaceAll('/opt/toolgate', opt).replaceAll('/var/lib/toolgate', state).replaceAll('/etc/toolgate', etc);
    const untar = comment.find((l) => /tar -xzf toolgate-VERSION\.tgz/.test(l)) ?? assert.fail('a tarball route');
    mkdirSync(opt, { recursive: true });
    mkdirSync(state, { recursive: true });
    const args = here(untar.slice(untar.indexOf('tar -xzf'))).replace('toolgate-VERSION.tgz', tarball).split(/\s+/).slice(1);
    execFileSync('tar', args);
    assert.ok(comment.some((l) => l.includes('cd /opt/toolgate && npm install --omit=dev')), 'the runtime dependencies installed in place');
    // What `npm install --omit=dev` places there: the runtime dependency closure (copied, as above).
    const manifest = JSON.parse(readFileSync(join(opt, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    for (const path of runtimeClosure(Object.keys(manifest.dependencies))) {
      const from = join(REPO_ROOT, path);
      cpSync(from, join(opt, path), { recursive: true, dereference: true, filter: (src) => wanted(path, src.slice(from.length + 1)) });
    }
    // The configuration the unit names, made as its comment says: from the example the package ships.
    const config = comment.find((l) => /\/etc\/toolgate\/toolgate\.yaml \(start from /.test(l)) ?? assert.fail('where the configuration comes from');
    mkdirSync(etc, { recursive: true });
    copyFileSync(here(/start from (\S+?)\)/.exec(config)![1]!), join(etc, 'toolgate.yaml'));
    const execStart = /^ExecStart=(.*)$/m.exec(unit)?.[1] ?? assert.fail('ExecStart');
    const [, script, ...rest] = here(execStart).replace('--port 8765', '--port 0').split(/\s+/);
    const proc = spawn(process.execPath, [script!, ...rest], { env: { ...env, TOOLGATE_HOME: state, NODE_ENV: 'production' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => proc.on('exit', resolve));
    try {
      await waitFor(() => stderr.includes('{"listening":'), () => `the listening line from ${script}:\n${stderr}`, 60_000);
      proc.kill('SIGTERM');
      assert.equal(await exited, 0, stderr);
    } finally {
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
  });

  test('npm pack in a fresh clone packs dist/: prepack is the build', () => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(manifest.scripts.prepack, 'npm run build');
  });

  test('the conformance runner ships with its dependencies: it passes against the installed daemon', async () => {
    const bin = join(app, 'node_modules', '.bin', 'toolgate');
    const db = join(work, 'data', 'conformance.db');
    const conformanceEnv = homeOf('conformance');
    const token = await devToken('carol', db, conformanceEnv);
    // The in-process executor: this test is about the runner's dependencies and the installed daemon's protocol. Every
    // check against the subprocess executor runs in conformance.test.ts; the installed package's project-cli (its
    // start-up snapshot included) runs a call in the stdio session test below.
    const r = await run(bin, ['conformance', '--stdio', `${bin} serve --stdio --executor inprocess --db ${db}`, '--token', token], conformanceEnv);
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout.trimEnd().split('\n').at(-1) ?? '', /^\d+ passed, 0 failed$/);
  });

  test('the installed runner checks a daemon that is not toolgate, and its --help says how', async () => {
    const bin = join(app, 'node_modules', '.bin', 'toolgate');
    // Another implementation: a fake daemon sharing no code with the package, with one defect.
    const fake = join(REPO_ROOT, 'dist', 'test', 'fixtures', 'broken-daemon.js');
    const token = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlIn0.c2lnbmF0dXJl';
    const [r, help] = await Promise.all([
      run(bin, ['conformance', '--stdio', `${process.execPath} ${fake} --fake history-text`, '--token', token, '--timeout-ms', '10000'], { ...homeOf('fake'), FAKE_TOKEN: token }),
      run(bin, ['conformance', '--help'], homeOf('fake-help')),
    ]);
    assert.equal(r.status, 1, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /^FAIL .*byte-identical/m);
    assert.match(r.stdout.trimEnd().split('\n').at(-1) ?? '', /^\d+ passed, [1-9]\d* failed$/);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /your own implementation/);
  });

  test('a stdio session from the installed package: initialize, session/open with a dev token, one tool/invoke from the CLI\'s start-up snapshot', async () => {
    const bin = join(app, 'node_modules', '.bin', 'toolgate');
    const db = join(work, 'data', 'toolgate.db');
    const stdioEnv = homeOf('stdio');
    const token = await devToken('alice', db, stdioEnv);
    const proc = spawn(bin, ['serve', '--stdio', '--db', db], { cwd: app, env: { ...stdioEnv, TOOLGATE_LOG_LEVEL: 'debug' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => proc.on('exit', resolve));
    const rpc = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
    rpc.listen();
    try {
      const init = await rpc.sendRequest<{ server_info: { version: string } }>('initialize', { protocol_version: '1' });
      assert.ok(init.server_info.version);
      const session = await rpc.sendRequest<{ session_id: string; user_id: string }>('session/open', { auth: { type: 'bearer', token } });
      assert.equal(session.user_id, 'alice');
      // The shipped blob runs here (same node): the call starts from it, better-sqlite3 found where it is installed.
      await waitFor(() => stderr.includes('"msg":"project-cli launch","mode":"snapshot"'), () => `the snapshot launch line in:\n${stderr}`);
      const r = await rpc.sendRequest<{ status: string; content: Array<{ text: string }> }>('tool/invoke', {
        session_id: session.session_id,
        thread_id: 'packed',
        tool_call_id: 'c1',
        args: { module: 'calendar', method: 'create', input: { title: 'From the tarball', start_at: '2026-04-21T10:00:00+08:00', end_at: '2026-04-21T11:00:00+08:00' } },
      });
      assert.equal(r.status, 'success', `${r.content[0]?.text}\n${stderr}`);
      assert.equal((JSON.parse(r.content[0]!.text) as { data: { event: { title: string } } }).data.event.title, 'From the tarball');
      // Log lines leave in batches (up to 25 ms after they are written), so the run's line may follow the reply.
      const ran = /"msg":"project-cli ran".*"launch":"snapshot","exit_code":0/;
      await waitFor(() => ran.test(stderr), () => `a snapshot run line in:\n${stderr}`);
      await rpc.sendRequest('shutdown');
      await rpc.sendNotification('exit');
      assert.equal(await exited, 0, stderr);
    } finally {
      rpc.dispose();
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
    assert.ok(existsSync(dirname(db)));
  });
});
