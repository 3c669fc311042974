/**
 * A newcomer's mistakes, each made once as a person would make it: every one
 * is one line on stderr naming what to fix, exit 2, no stack — and nothing
 * is created before the refusal. Also: the dev secret and signing key stay in
 * the data folder whatever --db says, and a host built on toolgate/client
 * (or the conformance runner) shows the daemon's own last line when it
 * refuses to start.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ToolgateClient } from '../../src/client/index.js';
import { REPO_ROOT, TOOLGATE_BIN, PROJECT_CLI_BIN, tempDir } from '../helpers/repo.js';
import { TEST_BEARER_SECRET } from '../helpers/tokens.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A person's shell: a fresh HOME, nothing of this process's environment. */
function freshEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: tempDir('toolgate-home-'), ...extra };
}

function run(program: string, args: string[], env: Record<string, string>, opts: { cwd?: string } = {}): Run {
  const r = spawnSync(process.execPath, [program, ...args], { env, cwd: opts.cwd, input: '', encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function assertOneLine(r: Run, message: RegExp, label: string): void {
  assert.equal(r.code, 2, `${label}: exit 2\n${r.stderr}`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `${label}: one line on stderr, got:\n${r.stderr}`);
  assert.match(lines[0]!, message, label);
  assert.doesNotMatch(r.stderr, /\n\s+at |crashed|ERR_MODULE_NOT_FOUND|EEXIST|ENOTDIR/, label);
}

test('--db under a regular file: one line naming the file, exit 2', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'notes.txt'), 'x');
  const r = run(TOOLGATE_BIN, ['serve', '--stdio', '--dev', '--db', join(dir, 'notes.txt', 'x.db')], freshEnv());
  assertOneLine(r, new RegExp(`^toolgate: --db: ${join(dir, 'notes.txt')} is a file, not a folder`), 'serve --db');
  const job = run(TOOLGATE_BIN, ['automation', 'add', '--owner', 'a', '--allow', 'memory.read', '--db', join(dir, 'notes.txt', 'x.db')], freshEnv());
  assertOneLine(job, /^toolgate: --db: .*notes\.txt is a file, not a folder/, 'automation add --db');
});

test('a data folder under a regular file: one line, exit 2 (dev-token and serve --dev)', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'f'), 'x');
  const env = freshEnv({ TOOLGATE_HOME: join(dir, 'f', 'home') });
  assertOneLine(run(TOOLGATE_BIN, ['dev-token', '--user', 'a'], env), /^toolgate: the data folder .*f is a file, not a folder/, 'dev-token');
  assertOneLine(run(TOOLGATE_BIN, ['serve', '--stdio', '--dev', '--db', join(dir, 'x.db')], env), /f is a file, not a folder/, 'serve --dev');
});

test('an unresolvable --host: one line naming it, exit 2, before anything is created', () => {
  const env = freshEnv({ TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET });
  const r = run(TOOLGATE_BIN, ['serve', '--ws', '--port', '0', '--host', 'no-such-host.invalid'], env);
  assertOneLine(r, /^toolgate serve: cannot listen on --host "no-such-host\.invalid": no such host name \((ENOTFOUND|EAI_AGAIN|EAI_FAIL)\)/, '--host');
  assert.deepEqual(readdirSync(env.HOME!), [], 'no data folder, key or database was created');
});

test('the bins in a checkout that was never built: one line naming npm run build, exit 2', () => {
  const clone = tempDir('toolgate-clone-');
  // The checkout's bin/ as it is committed (the bins and the launcher project-cli.mjs imports), no dist/.
  cpSync(join(REPO_ROOT, 'bin'), join(clone, 'bin'), { recursive: true });
  assertOneLine(run(join(clone, 'bin', 'toolgate.mjs'), ['--help'], freshEnv()), /^toolgate: this checkout cannot run yet, it is not built .*: run npm ci && npm run build in /, 'toolgate');
  assertOneLine(run(join(clone, 'bin', 'project-cli.mjs'), ['memory', 'read'], freshEnv()), /^project-cli: this checkout cannot run yet, it is not built .*npm run build/, 'project-cli');
  // The launcher alone (bin/ copied in part): still one line, exit 2, naming both steps.
  rmSync(join(clone, 'bin', 'not-ready.mjs'));
  assertOneLine(run(join(clone, 'bin', 'toolgate.mjs'), ['--help'], freshEnv()), /^toolgate: this checkout cannot run yet: run npm ci && npm run build in /, 'toolgate without not-ready.mjs');
});

test('a built checkout without its dependencies: one line naming npm ci, exit 2, for a command that loads them late', () => {
  const clone = tempDir('toolgate-clone-');
  cpSync(join(REPO_ROOT, 'bin'), join(clone, 'bin'), { recursive: true });
  for (const file of ['package.json', 'package-lock.json']) copyFileSync(join(REPO_ROOT, file), join(clone, file));
  // The bundle and what it was built from, times kept: the launcher runs the bundle, as in the checkout.
  for (const part of ['src', 'daemon']) cpSync(join(REPO_ROOT, 'dist', part), join(clone, 'dist', part), { recursive: true, preserveTimestamps: true });
  const env = freshEnv({ TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_HOME: join(clone, 'data') });
  assert.equal(run(join(clone, 'bin', 'toolgate.mjs'), ['--version'], env).code, 0, '--version needs no dependency');
  assertOneLine(run(join(clone, 'bin', 'toolgate.mjs'), ['serve', '--stdio'], env), /^toolgate: this checkout cannot run yet, its dependencies are not installed: run npm ci in /, 'serve');
  // Installed, but not what the checkout's lockfile pins: the package's "exports" lack its main entry.
  mkdirSync(join(clone, 'node_modules', 'better-sqlite3'), { recursive: true });
  writeFileSync(join(clone, 'node_modules', 'better-sqlite3', 'package.json'), JSON.stringify({ name: 'better-sqlite3', version: '0.0.0', exports: { './other': './other.js' } }));
  assertOneLine(run(join(clone, 'bin', 'toolgate.mjs'), ['serve', '--stdio'], env), /^toolgate: this checkout cannot run yet, its installed dependencies do not match it \(better-sqlite3\): run npm ci in /, 'serve, mismatched');
  // The same in an installed copy (npm ships no lockfile): a dependency's release, not a stale install. The
  // crash line names the package and the path; no advice npm ci could not follow there.
  rmSync(join(clone, 'package-lock.json'));
  const installed = run(join(clone, 'bin', 'toolgate.mjs'), ['serve', '--stdio'], env);
  assert.equal(installed.code, 1, installed.stderr);
  assert.match(installed.stderr, /No \\?"exports\\?" main defined in .*better-sqlite3/);
  assert.doesNotMatch(installed.stderr, /npm ci/);
});

test('serve --mcp --dev without a usable token refuses before creating the database, secret or key', () => {
  const env = freshEnv();
  const home = join(env.HOME!, 'data');
  const noToken = run(TOOLGATE_BIN, ['serve', '--mcp', '--dev'], { ...env, TOOLGATE_HOME: home });
  assertOneLine(noToken, /^toolgate: serve --mcp acts for the user of a bearer token: set TOOLGATE_MCP_TOKEN/, 'no token');
  assert.equal(existsSync(home), false, 'nothing was created');
  // A token given before any dev secret exists cannot verify: said plainly, and still nothing is created.
  const early = run(TOOLGATE_BIN, ['serve', '--mcp', '--dev'], { ...env, TOOLGATE_HOME: home, TOOLGATE_MCP_TOKEN: 'a.b.c' });
  assertOneLine(early, /^toolgate: TOOLGATE_MCP_TOKEN cannot verify: there is no dev secret in .* yet; mint the token with toolgate dev-token/, 'no dev secret');
  assert.equal(existsSync(home), false, 'nothing was created');
});

test('--db in folders that do not exist: they are created, and the log says where', () => {
  const dir = tempDir();
  const db = join(dir, 'no', 'such', 'x.db');
  const r = run(TOOLGATE_BIN, ['serve', '--stdio', '--db', db], freshEnv({ TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET }));
  assert.equal(r.code, 0, r.stderr);
  const created = r.stderr.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg?: string; folder?: string }).find((l) => l.msg === 'created the folder for the database');
  assert.equal(created?.folder, join(dir, 'no', 'such'));
  assert.ok(existsSync(db));
});

test('the dev secret and signing key stay in the data folder: a dev-token minted once works with serve --dev --db elsewhere', async () => {
  const env = freshEnv();
  const home = join(env.HOME!, 'tg');
  const elsewhere = tempDir('toolgate-elsewhere-');
  const token = run(TOOLGATE_BIN, ['dev-token', '--user', 'you'], { ...env, TOOLGATE_HOME: home });
  assert.equal(token.code, 0, token.stderr);
  const client = ToolgateClient.spawn({ command: [process.execPath, TOOLGATE_BIN], args: ['--dev', '--db', join(elsewhere, 'mine.db')], env: { ...env, TOOLGATE_HOME: home }, token: token.stdout.trim() });
  try {
    await client.initialize();
    const session = await client.openSession();
    assert.equal(session.info.user_id, 'you');
    const call = await session.invoke('t', 'c1', { module: 'memory', method: 'read', input: {} });
    assert.equal(call.status, 'success', call.content[0]!.text);
  } finally {
    await client.stop();
  }
  assert.deepEqual(readdirSync(elsewhere).filter((f) => !f.startsWith('mine.db')), [], 'no secret or key beside the database');
  assert.ok(existsSync(join(home, 'dev-bearer-secret')) && existsSync(join(home, 'credential-signing-key.jwk')));
});

test('a dev secret an older toolgate left beside the database is not used, and the log says so', () => {
  const env = freshEnv();
  const home = join(env.HOME!, 'tg');
  const old = tempDir('toolgate-old-');
  writeFileSync(join(old, 'dev-bearer-secret'), 'an-old-secret-from-before-the-move', { mode: 0o600 });
  const r = run(TOOLGATE_BIN, ['serve', '--stdio', '--dev', '--db', join(old, 'toolgate.db')], { ...env, TOOLGATE_HOME: home });
  assert.equal(r.code, 0, r.stderr);
  const warn = r.stderr.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level?: string; ignored?: string; used?: string }).find((l) => l.ignored);
  assert.equal(warn?.level, 'warn');
  assert.equal(warn?.ignored, join(old, 'dev-bearer-secret'));
  assert.equal(warn?.used, join(home, 'dev-bearer-secret'));
  assert.doesNotMatch(r.stderr, /an-old-secret/, 'the secret itself is never logged');
});

test('examples/stdio-host without --dev: the daemon\'s own "no bearer secret" line, once, no -32097 and no stack', () => {
  const env = freshEnv();
  const token = run(TOOLGATE_BIN, ['dev-token', '--user', 'alice'], env);
  const r = run(join(REPO_ROOT, 'dist', 'examples', 'stdio-host', 'main.js'), [], { ...env, TOOLGATE_TOKEN: token.stdout.trim() });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /^stdio-host: daemon exited 2: toolgate: no bearer secret configured: set TOOLGATE_BEARER_SECRET .* or pass --dev/);
  assert.doesNotMatch(r.stderr, /32097|disposed|\n\s+at /);
});

test('the conformance runner against a daemon that refuses to start says why once, then stops', () => {
  const env = freshEnv();
  const token = run(TOOLGATE_BIN, ['dev-token', '--user', 'alice'], env).stdout.trim();
  const r = run(TOOLGATE_BIN, ['conformance', '--stdio', `${process.execPath} ${TOOLGATE_BIN} serve --stdio --db ${join(tempDir(), 'c.db')}`, '--token', token], env);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.equal((r.stdout.match(/daemon exited 2: toolgate: no bearer secret configured/g) ?? []).length, 1, r.stdout);
  assert.equal((r.stdout.match(/^FAIL/gm) ?? []).length, 1, r.stdout);
  assert.match(r.stdout.trimEnd().split('\n').at(-1)!, /^0 passed, \d+ failed$/);
});

test('toolgate demo without --db uses the data folder, never the current folder', () => {
  const env = freshEnv();
  const home = join(env.HOME!, 'tg');
  const cwd = tempDir('toolgate-cwd-');
  const r = run(TOOLGATE_BIN, ['demo'], { ...env, TOOLGATE_HOME: home }, { cwd });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(readdirSync(cwd), [], 'nothing written where it ran');
  assert.ok(existsSync(join(home, 'toolgate.db')));
  assert.doesNotMatch(r.stdout, /npm run inspector/, 'no npm script outside the repository');
  assert.match(r.stdout, /serve --ws --port 8787 --dev`/);
});

test('serve --stdio fed newline-delimited JSON answers once, naming LSP framing, and exits 2 with stdin still open', async () => {
  const home = tempDir('toolgate-home-');
  const child = spawn(process.execPath, [TOOLGATE_BIN, 'serve', '--stdio', '--dev', '--db', join(home, 't.db')], { env: freshEnv({ TOOLGATE_HOME: home }), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString('utf8')));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // What people type first; stdin stays open, as under `(echo …; sleep 8) |`.
  child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":"1"}}\n');
  let code: number | null;
  // A ceiling for a hung daemon (null: the assertion below fails with its stderr), cleared once it exits:
  // a poll left running after the race kept this file alive 28 s.
  let ceiling: NodeJS.Timeout | undefined;
  try {
    code = await Promise.race([exited, new Promise<null>((resolve) => (ceiling = setTimeout(() => resolve(null), 30_000)))]);
  } finally {
    clearTimeout(ceiling);
    child.stdin.destroy();
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  assert.equal(code, 2, stderr);
  const m = /^Content-Length: (\d+)\r\n\r\n(.*)$/s.exec(stdout);
  assert.ok(m, `one LSP-framed answer on stdout, got ${JSON.stringify(stdout)}`);
  assert.equal(Buffer.byteLength(m[2]!), Number(m[1]));
  const reply = JSON.parse(m[2]!) as { id: unknown; error: { code: number; message: string } };
  assert.equal(reply.id, null);
  assert.equal(reply.error.code, -32700);
  assert.match(reply.error.message, /LSP framing.*Content-Length.*serve --mcp/);
  const errors = stderr.split('\n').filter((l) => l.includes('"level":"error"'));
  assert.equal(errors.length, 1, stderr);
  assert.match(errors[0]!, /LSP framing/);
  assert.doesNotMatch(stderr, /\n\s+at /);
});

test('project-cli by hand on dev data: dev-credential for one user and one action, refused without the dev secret', () => {
  const home = tempDir('toolgate-home-');
  const db = join(home, 'try.db');
  const env = freshEnv({ TOOLGATE_HOME: home });
  assertOneLine(run(TOOLGATE_BIN, ['dev-credential', '--user', 'alice', '--action', 'calendar.read', '--db', db], env), /^toolgate: dev-credential works only on --dev data: .* holds no dev secret — run toolgate serve --dev/, 'no dev data');
  assert.equal(existsSync(db), false, 'nothing created before the refusal');
  assert.equal(run(TOOLGATE_BIN, ['dev-token', '--user', 'alice'], env).code, 0);
  assertOneLine(run(TOOLGATE_BIN, ['dev-credential', '--user', 'alice', '--action', 'calendar.raed', '--db', db], env), /^toolgate: --action: unknown action "calendar\.raed" — one of .*calendar\.read/, 'unknown action');
  assertOneLine(run(TOOLGATE_BIN, ['dev-credential', '--user', 'alice', '--action', 'calendar.read', '--db', db], { ...env, TOOLGATE_CREDENTIAL_KEY_FILE: join(home, 'k.jwk') }), /unset TOOLGATE_CREDENTIAL_KEY_FILE/, 'a real key');
  const minted = run(TOOLGATE_BIN, ['dev-credential', '--user', 'alice', '--action', 'calendar.read', '--db', db], env);
  assert.equal(minted.code, 0, minted.stderr);
  const cli = (args: string[]) => run(PROJECT_CLI_BIN, args, { ...env, TOOLGATE_DB: db, PROJECT_CLI_CREDENTIAL: minted.stdout.trim() });
  const read = cli(['calendar', 'read', '--mode', 'day', '--date', '2026-04-21']);
  assert.equal(read.code, 0, read.stdout + read.stderr);
  assert.deepEqual(JSON.parse(read.stdout), { ok: true, module: 'calendar', method: 'read', data: { items: [], count: 0, next_cursor: null } });
  const create = cli(['calendar', 'create', '--title', 'x']);
  assert.equal(create.code, 4, create.stdout);
  assert.equal((JSON.parse(create.stdout) as { error: { code: string } }).error.code, 'ACTION_NOT_ALLOWED');
});

test('a bearer secret shorter than 32 bytes is accepted with one warn line saying how to generate one', () => {
  const home = tempDir('toolgate-home-');
  const r = run(TOOLGATE_BIN, ['serve', '--stdio', '--db', join(home, 't.db')], freshEnv({ TOOLGATE_HOME: home, TOOLGATE_BEARER_SECRET: 'abc' }));
  assert.equal(r.code, 0, r.stderr);
  const warns = r.stderr.split('\n').filter((l) => l.includes('"level":"warn"'));
  assert.equal(warns.length, 1, r.stderr);
  assert.match(warns[0]!, /shorter than 32 bytes.*openssl rand -base64 48/);
});

test('--db where no folder can be made (/proc/x/t.db): one line naming the folder, exit 2, no hang', () => {
  const r = run(TOOLGATE_BIN, ['serve', '--stdio', '--dev', '--db', '/proc/x/t.db'], freshEnv({ TOOLGATE_HOME: tempDir('toolgate-home-') }));
  assertOneLine(r, /^toolgate: --db: cannot create the folder \/proc\/x \(folders cannot be made there\) — choose another path$/, 'serve --db /proc/x/t.db');
});

test('a mistyped flag: one line that says which flag was meant, exit 2', () => {
  const env = freshEnv({ TOOLGATE_HOME: tempDir('toolgate-home-') });
  assertOneLine(run(TOOLGATE_BIN, ['serve', '--websocket', '--port', '0'], env), /^toolgate serve: unknown flag --websocket — did you mean --ws\? \(see toolgate serve --help\)$/, '--websocket');
  assertOneLine(run(TOOLGATE_BIN, ['dev-token', '--usr', 'a'], env), /^toolgate dev-token: unknown flag --usr — did you mean --user\?/, '--usr');
  assertOneLine(run(TOOLGATE_BIN, ['serve', '--zzz'], env), /^toolgate serve: unknown flag --zzz \(see toolgate serve --help\)$/, 'nothing close');
});
