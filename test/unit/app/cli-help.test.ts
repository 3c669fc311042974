/**
 * `toolgate` as a newcomer meets it: every command and subcommand answers
 * --help (exit 0, names its flags), and every usage mistake is one clean
 * line on stderr with exit 2 — no Node parser text, no stack.
 *
 * The many cases run through `main(argv, io)` in this process; the binary
 * itself (bin/toolgate.mjs: its stdout, stderr and exit code) is checked
 * spawned for help, for a usage mistake and for a port in use.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { main } from '../../../src/app/cli.js';
import { crashLine } from '../../../src/app/crash-line.js';
import { ALL_SPECS, COMMANDS } from '../../../src/app/cli-commands.js';
import { ENVIRONMENT } from '../../../src/app/cli-help.js';
import { TOOLGATE_BIN, tempDir } from '../../helpers/repo.js';
import { TEST_BEARER_SECRET, mintBearer } from '../../helpers/tokens.js';

const env = { PATH: process.env.PATH ?? '', HOME: tempDir('toolgate-home-'), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET };
/** The --token of conformance runs that never open a session. Masked in their output like any token, so not a letter. */
const STAND_IN_TOKEN = 'stand-in-bearer-token-0123456789';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The binary, as a newcomer runs it. */
function spawned(args: string[]): Run {
  const r = spawnSync(process.execPath, [TOOLGATE_BIN, ...args], { env, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same command line through `main(argv, io)`, in process. */
async function toolgate(args: string[], withEnv: NodeJS.ProcessEnv = env): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, env: withEnv });
  return { code, stdout, stderr };
}

/** One line, ending in a pointer to help, and nothing that looks like a stack or Node's own wording. */
function assertCleanUsageError(r: Run, label: string): void {
  assert.equal(r.code, 2, `${label}: exit 2\n${r.stderr}`);
  assert.equal(r.stdout, '', `${label}: nothing on stdout`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `${label}: one line, got:\n${r.stderr}`);
  assert.match(lines[0]!, /^toolgate/, label);
  assert.doesNotMatch(r.stderr, /\n\s+at |ERR_PARSE_ARGS|TypeError|crashed|Unknown option|ambiguous/, label);
}

test('the binary: --help on stdout with exit 0; a usage mistake is one line on stderr with exit 2', () => {
  const help = spawned(['--help']);
  assert.equal(help.code, 0, help.stderr);
  assert.equal(help.stderr, '');
  for (const c of COMMANDS) assert.match(help.stdout, new RegExp(`^  ${c.name}\\s+\\S.*$`, 'm'), `lists ${c.name}`);
  const bad = spawned(['dev-token', '--user', 'a', '--ttl', '-5']);
  assertCleanUsageError(bad, 'dev-token --ttl -5');
  assert.match(bad.stderr, /--ttl must be a positive whole number of seconds/);
});

test('top-level --help lists every command on one line and names the environment', async () => {
  for (const flag of ['--help', '-h', 'help']) {
    const r = await toolgate([flag]);
    assert.equal(r.code, 0, r.stderr);
    for (const c of COMMANDS) assert.match(r.stdout, new RegExp(`^  ${c.name}\\s+\\S.*$`, 'm'), `lists ${c.name}`);
    for (const name of Object.keys(ENVIRONMENT)) assert.ok(r.stdout.includes(name), `names ${name}`);
  }
});

test('every command and subcommand answers --help: exit 0, its flags, environment and an example', async () => {
  for (const spec of ALL_SPECS) {
    const argv = [...spec.name.split(' '), '--help'];
    const r = await toolgate(argv);
    assert.equal(r.code, 0, `${argv.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr, '', argv.join(' '));
    assert.ok(r.stdout.startsWith(`toolgate ${spec.name} — `), `${spec.name}: says what it does`);
    for (const flag of Object.keys(spec.flags)) assert.match(r.stdout, new RegExp(`--${flag}\\b`), `${spec.name} names --${flag}`);
    for (const e of spec.env) assert.ok(r.stdout.includes(e), `${spec.name} names ${e}`);
    assert.match(r.stdout, /^examples?:$/m, `${spec.name} has an example`);
    assert.equal((await toolgate(['help', ...spec.name.split(' ')])).stdout, r.stdout, `toolgate help ${spec.name}`);
    // -h works too, and --help wins over other (even bad) flags.
    assert.equal((await toolgate([...spec.name.split(' '), '--no-such-flag', '-h'])).code, 0, `${spec.name} -h`);
  }
});

test('serve --help names the variables a host needs, with defaults for the limits', async () => {
  const r = await toolgate(['serve', '--help']);
  for (const name of ['TOOLGATE_MCP_TOKEN', 'TOOLGATE_LOG_LEVEL', 'TOOLGATE_BEARER_JWKS', 'TOOLGATE_SERVICE_KEY', 'TOOLGATE_CREDENTIAL_KEY_FILE']) {
    assert.ok(r.stdout.includes(name), name);
  }
  assert.match(r.stdout, /--host HOST .*\(default: 127\.0\.0\.1\)/);
  assert.match(r.stdout, /--call-timeout-ms N .*\(default: 30000\)/);
});

test('a bad flag on every command and subcommand is one line with exit 2', async () => {
  for (const spec of ALL_SPECS) {
    const argv = [...spec.name.split(' '), '--no-such-flag'];
    const r = await toolgate(argv);
    assertCleanUsageError(r, argv.join(' '));
    assert.match(r.stderr, /unknown flag --no-such-flag|needs a subcommand|unknown subcommand/, argv.join(' '));
  }
});

test('usage mistakes are one line with exit 2: missing values, negative numbers, missing required flags', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['dev-token', '--user', 'a', '--ttl', '-5'], /--ttl must be a positive whole number of seconds/],
    [['dev-token', '--user', 'a', '--ttl', 'soon'], /--ttl must be/],
    [['dev-token', '--user'], /--user needs a value/],
    [['dev-token'], /needs --user/],
    [['automation', 'add', '--owner', 'u'], /needs --allow/],
    [['automation', 'add', '--allow', 'calendar.read'], /needs --owner/],
    [['automation', 'remove'], /unknown subcommand "remove"/],
    [['serve'], /exactly one transport/],
    [['serve', '--stdio', '--ws', '--port', '0'], /exactly one transport/],
    [['serve', '--ws'], /needs --port/],
    [['serve', '--ws', '--port', '-1'], /--port must be an integer from 0 to 65535/],
    [['serve', '--stdio', '--executor', 'thread'], /--executor must be subprocess or inprocess/],
    [['serve', '--stdio=yes'], /--stdio takes no value/],
    [['serve', '--stdio', 'extra'], /unexpected argument "extra"/],
    [['demo', 'now'], /unexpected argument "now"/],
    [['frobnicate'], /unknown command "frobnicate"/],
  ];
  for (const [argv, message] of cases) {
    const r = await toolgate(argv);
    assertCleanUsageError(r, argv.join(' '));
    assert.match(r.stderr, message, argv.join(' '));
  }
});

test('a single-value flag given twice is refused in one line, exit 2, on every command (not its last value taken)', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['dev-token', '--user', 'a', '--user', 'b'], /^toolgate dev-token: --user given twice/],
    [['dev-token', '--user=a', '--user', 'b'], /--user given twice/],
    [['serve', '--stdio', '--db', 'a.db', '--db=b.db'], /--db given twice/],
    [['automation', 'add', '--owner', 'u', '--owner', 'v', '--allow', 'calendar.read'], /--owner given twice/],
  ];
  for (const [argv, message] of cases) {
    const r = await toolgate(argv);
    assertCleanUsageError(r, argv.join(' '));
    assert.match(r.stderr, message, argv.join(' '));
  }
  // Once each is fine.
  assert.equal((await toolgate(['dev-token', '--user', 'a'])).code, 0);
});

test('a user id no token could carry is refused by dev-token and automation add, one line, exit 2', async () => {
  // The daemon refuses a `sub` that is not 1-200 printable characters without surrounding space
  // (contract section 13): a token or job minted for one would be refused later, or act for nobody.
  const db = join(tempDir('toolgate-owner-'), 'toolgate.db');
  for (const user of [' alice', 'alice ', 'a\u0001b', 'a\u200bb', 'x'.repeat(201)]) {
    for (const argv of [
      ['dev-token', '--user', user],
      ['automation', 'add', '--owner', user, '--allow', 'calendar.read', '--db', db],
    ]) {
      const r = await toolgate(argv);
      assertCleanUsageError(r, JSON.stringify(argv));
      assert.match(r.stderr, /--(user|owner): a user id is printable text/, JSON.stringify(argv));
    }
  }
  const ok = await toolgate(['dev-token', '--user', 'a b']);
  assert.equal(ok.code, 0, ok.stderr);
});

test('a token typed as a command, subcommand, flag or argument is never echoed, not even its first characters', async () => {
  // Contract section 7: a token a client names is never repeated in an error; a cut echo still showed its payload.
  const token = `x${await mintBearer('alice')}`;
  const payload = token.split('.')[1]!.slice(0, 20);
  for (const argv of [[token], ['automation', token], ['dev-token', `--${token}`, '1'], ['dev-token', '--user', 'a', token], ['help', token]]) {
    const r = await toolgate(argv);
    assertCleanUsageError(r, argv[0]!.slice(0, 12));
    assert.ok(!r.stderr.includes(payload), `${argv[0]!.slice(0, 12)}: echoed ${r.stderr}`);
    assert.match(r.stderr, /\[redacted\]/);
  }
  const plain = await toolgate(['no-such-command']);
  assert.match(plain.stderr, /unknown command "no-such-command"/);
});

test('a configured secret typed as a command, subcommand, flag or argument is never echoed, from the environment or the data folder', async () => {
  // Contract section 5: the bearer secret is masked like a token, whether TOOLGATE_BEARER_SECRET or TOOLGATE_HOME holds it.
  const home = tempDir('toolgate-data-');
  const devSecret = 'dev-secret-kept-in-the-data-folder-0123456789';
  writeFileSync(join(home, 'dev-bearer-secret'), `${devSecret}\n`, { mode: 0o600 });
  const sources: Array<[string, NodeJS.ProcessEnv, string]> = [
    ['env', env, TEST_BEARER_SECRET],
    ['data folder', { PATH: env.PATH, HOME: env.HOME, TOOLGATE_HOME: home }, devSecret],
  ];
  for (const [source, withEnv, secret] of sources) {
    for (const typed of [`x${secret}`, `${'y'.repeat(70)}${secret}`]) {
      for (const argv of [[typed], ['automation', typed], ['dev-token', `--${typed}`, '1'], ['dev-token', '--user', 'a', typed], ['help', typed]]) {
        const r = await toolgate(argv, withEnv);
        const label = `${source}: ${argv.map((a) => a.slice(0, 12)).join(' ')}`;
        assertCleanUsageError(r, label);
        assert.ok(!r.stderr.includes(secret.slice(0, 7)), `${label}: echoed ${r.stderr}`);
        assert.match(r.stderr, /\[redacted\]/, label);
      }
    }
  }
  const plain = await toolgate(['no-such-command'], sources[1]![1]);
  assert.match(plain.stderr, /unknown command "no-such-command"/);
});

test('conformance: a --stdio program that does not exist or a --ws host that does not resolve is one line, exit 2', async () => {
  // Contract section 1: a bad path or an unresolvable host is a mistake, not a report of 45 failed checks.
  const cases: Array<[string[], RegExp]> = [
    [['conformance', '--stdio', '/nonexistent/toolgate serve --stdio', '--token', STAND_IN_TOKEN], /--stdio: cannot find the program "\/nonexistent\/toolgate"/],
    [['conformance', '--stdio', 'no-such-toolgate-binary serve', '--token', STAND_IN_TOKEN], /--stdio: cannot find the program "no-such-toolgate-binary"/],
    [['conformance', '--ws', 'ws://no-such-host.invalid:8787/rpc', '--token', STAND_IN_TOKEN], /--ws: cannot resolve the host "no-such-host.invalid"/],
  ];
  for (const [argv, message] of cases) {
    const r = await toolgate(argv);
    assertCleanUsageError(r, argv.join(' '));
    assert.match(r.stderr, message, argv.join(' '));
  }
});

test('conformance: a token or configured secret in the --stdio program or its arguments is never echoed', async () => {
  // Contract section 5: neither the usage error nor the report (its header, the program's last stderr line) shows one.
  const token = await mintBearer('alice');
  const hsSecret = 'implementation-hs256-secret-0123456789';
  const marks = [token.split('.')[1]!.slice(0, 20), token.split('.')[2]!.slice(0, 20), TEST_BEARER_SECRET.slice(0, 12), hsSecret.slice(0, 12)];
  const echoes = (r: Run) => marks.filter((m) => (r.stdout + r.stderr).includes(m));
  for (const hidden of [`x${token}`, TEST_BEARER_SECRET]) {
    for (const program of [`/nonexistent/${hidden}`, hidden]) {
      const r = await toolgate(['conformance', '--stdio', `${program} serve --stdio`, '--token', STAND_IN_TOKEN]);
      assertCleanUsageError(r, program.slice(0, 20));
      assert.match(r.stderr, /--stdio: cannot find the program "[^"]*\[redacted\]"/);
      assert.deepEqual(echoes(r), [], r.stderr);
    }
  }
  // A program that starts and dies repeating what it was given on its last stderr line.
  for (const hidden of [`x${token}`, TEST_BEARER_SECRET, hsSecret]) {
    const program = `${process.execPath} -e 'console.error("bad argument:", process.argv[1]); process.exit(1)' ${hidden}`;
    const r = await toolgate(['conformance', '--stdio', program, '--token', STAND_IN_TOKEN, '--secret', hsSecret, '--timeout-ms', '5000']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /^toolgate conformance: stdio: .*\[redacted\]/m);
    assert.match(r.stdout, /daemon exited 1: .*\[redacted\]/);
    assert.deepEqual(echoes(r), [], r.stdout);
  }
  // A last line longer than what the runner keeps, cut inside a token: its tail is not reported either.
  const tail = token.split('.')[2]!.slice(-20);
  const long = `${process.execPath} -e 'console.error("a".repeat(100) + process.argv[1] + "b".repeat(3950)); process.exit(1)' x${token}`;
  const r = await toolgate(['conformance', '--stdio', long, '--token', STAND_IN_TOKEN, '--timeout-ms', '5000']);
  assert.equal(r.code, 1, r.stderr);
  assert.ok(!r.stdout.includes(tail), r.stdout.slice(0, 400));
});

test('conformance: its --secret is masked in a parse error, and a configured secret in a --ws host, lowercased there', async () => {
  const passphrase = 'Correct-Horse-Battery-Staple-0123';
  const parse = await toolgate(['conformance', '--stdio', '/bin/true', '--token', STAND_IN_TOKEN, '--secret', passphrase, `extra${passphrase}`]);
  assertCleanUsageError(parse, 'unexpected argument');
  assert.ok(!(parse.stdout + parse.stderr).includes(passphrase), parse.stderr);
  // A host name comes back lowercased from URL parsing: the lowercased secret is masked too.
  const mixed = 'Mixed-Case-Bearer-Secret-0123456789';
  const ws = await toolgate(['conformance', '--ws', `ws://${mixed}.invalid/`, '--token', STAND_IN_TOKEN, '--timeout-ms', '3000'], { ...env, TOOLGATE_BEARER_SECRET: mixed });
  const out = ws.stdout + ws.stderr;
  assert.match(out, /\[redacted\]/, out);
  assert.ok(!out.toLowerCase().includes('case-bearer-secret'), out);
});

test('conformance: its --token and --token-b are masked whatever their shape, in usage errors and in the report', async () => {
  // A bearer token need not be a JWT (an opaque one, an implementation's own): it is a secret all the same.
  const tokenA = 'opaque-bearer-token-a-0123456789abcdef';
  const tokenB = 'Opaque-Bearer-Token-B-0123456789ABCDEF';
  const echoes = (r: Run) => [tokenA, tokenB, tokenB.toLowerCase()].filter((t) => (r.stdout + r.stderr).includes(t));
  const parse = await toolgate(['conformance', '--stdio', '/bin/true', '--token', tokenA, `--token-b=${tokenB}`, `extra${tokenB}`]);
  assertCleanUsageError(parse, 'unexpected argument');
  assert.deepEqual(echoes(parse), [], parse.stderr);
  const missing = await toolgate(['conformance', '--stdio', `/nonexistent/${tokenA}`, '--token', tokenA]);
  assertCleanUsageError(missing, 'no such program');
  assert.match(missing.stderr, /cannot find the program "\/nonexistent\/\[redacted\]"/);
  const program = `${process.execPath} -e 'console.error("bad arguments:", process.argv.slice(1).join(" ")); process.exit(1)' ${tokenA} ${tokenB}`;
  const report = await toolgate(['conformance', '--stdio', program, '--token', tokenA, '--token-b', tokenB, '--timeout-ms', '5000']);
  assert.equal(report.code, 1, report.stderr);
  assert.match(report.stdout, /daemon exited 1: bad arguments: \[redacted\] \[redacted\]/);
  assert.deepEqual(echoes(report), [], report.stdout);
  // A token that begins with a dash and a digit is still the flag's value (the parser takes it), and masked.
  const dashed = '-9opaque-bearer-token-0123456789abcdef';
  const dashedProgram = `${process.execPath} -e 'console.error("bad arguments:", process.argv.slice(1).join(" ")); process.exit(1)' x${dashed}`;
  const dashedReport = await toolgate(['conformance', '--stdio', dashedProgram, '--token', dashed, '--timeout-ms', '5000']);
  assert.equal(dashedReport.code, 1, dashedReport.stderr);
  assert.match(dashedReport.stdout, /daemon exited 1: bad arguments: x\[redacted\]/);
  assert.ok(!(dashedReport.stdout + dashedReport.stderr).includes(dashed), dashedReport.stdout);
});

/**
 * `toolgate <args>` run by the binary, which must refuse its listen: exit 2 and one line matching `line`,
 * never a crash or a stack. Its stderr, for further checks. The daemon had begun to start: a JSON log line of
 * its own (the project-cli launch check, which runs beside the listen) may land before the exit; it is a log
 * line, not the error.
 */
async function refusedListen(args: string[], withEnv: NodeJS.ProcessEnv, line: RegExp): Promise<string> {
  const proc = spawn(process.execPath, [TOOLGATE_BIN, ...args], { env: withEnv });
  let stderr = '';
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
  assert.equal(code, 2, stderr);
  const lines = stderr.trimEnd().split('\n').filter((l) => !/^\{"ts":"[^"]+","level":"(debug|info)"/.test(l));
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0]!, line);
  assert.doesNotMatch(stderr, /crashed|\n\s+at /);
  return stderr;
}

test('an address the system will not listen on (an IPv6 scope naming no interface) is one line, exit 2, the host masked', async () => {
  // It used to reach the launcher as a crash (EINVAL is no mistake the command line knew). Through the binary,
  // with the bearer secret and then the data folder's dev secret inside the scope: masked either way (section 5).
  const envSecret = 'listen-env-bearer-secret-0123456789abcdef';
  const devSecret = 'listen-dev-bearer-secret-0123456789abcdef';
  const home = tempDir();
  writeFileSync(join(home, 'dev-bearer-secret'), devSecret, { mode: 0o600 });
  const runs = [
    { secret: envSecret, env: { PATH: env.PATH, TOOLGATE_HOME: home, TOOLGATE_BEARER_SECRET: envSecret }, dev: [] },
    { secret: devSecret, env: { PATH: env.PATH, TOOLGATE_HOME: home }, dev: ['--dev'] },
  ];
  for (const run of runs) {
    const args = ['serve', '--ws', '--port', '0', '--host', `fe80::1%${run.secret}`, ...run.dev, '--db', join(tempDir(), 'toolgate.db')];
    const stderr = await refusedListen(args, run.env as NodeJS.ProcessEnv, /^toolgate serve: cannot listen on fe80::1%\[redacted\]: the address is not one this machine can listen on .*\(EINVAL\)/);
    assert.ok(!stderr.includes(run.secret.slice(6)), stderr);
  }
});

test('the crash line masks the configured secrets, the environment\'s and the data folder\'s dev secret', () => {
  // Contract section 5. No command line reaches the launcher's crash line on purpose any more (the EINVAL listen
  // above was the last one found), so the line bin/toolgate.mjs writes is built here from an error whose text
  // repeats what the user typed, as a crash's does.
  const envSecret = 'crash-env-bearer-secret-0123456789abcdef';
  const devSecret = 'crash-dev-bearer-secret-0123456789abcdef';
  const home = tempDir();
  writeFileSync(join(home, 'dev-bearer-secret'), devSecret, { mode: 0o600 });
  const token = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';
  const err = new Error(`listen EINVAL: invalid argument ${envSecret} ${devSecret} ${token}`);
  const line = crashLine(err, { TOOLGATE_HOME: home, TOOLGATE_BEARER_SECRET: envSecret });
  const parsed = JSON.parse(line) as { level: string; msg: string; err: string };
  assert.deepEqual([parsed.level, parsed.msg], ['error', 'toolgate crashed']);
  assert.match(parsed.err, /^Error: listen EINVAL: invalid argument \[redacted\] \[redacted\] /);
  assert.match(parsed.err, /\n\s+at /, 'the stack is kept: a crash is a bug to report');
  for (const s of [envSecret, devSecret, token.split('.')[1]!, token.split('.')[2]!]) assert.ok(!line.includes(s.slice(6)), line);
  // Whatever was thrown, one line: an object is shown as JSON, one without a prototype too, a string as it is.
  assert.match((JSON.parse(crashLine({ code: 'X', secret: envSecret }, { TOOLGATE_BEARER_SECRET: envSecret })) as { err: string }).err, /^\{"code":"X","secret":"\[redacted\]"\}$/);
  assert.equal((JSON.parse(crashLine(Object.assign(Object.create(null) as object, { a: 1 }), {})) as { err: string }).err, '{"a":1}');
  assert.equal((JSON.parse(crashLine('plain', {})) as { err: string }).err, 'plain');
});

test('serve --ws on a port that is taken: one clean line naming the address, exit 2', async () => {
  const holder: Server = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const port = (holder.address() as { port: number }).port;
  try {
    const args = ['serve', '--ws', '--port', String(port), '--db', join(tempDir(), 'toolgate.db')];
    const stderr = await refusedListen(args, env, new RegExp(`^toolgate serve: cannot listen on 127\\.0\\.0\\.1:${port}: .*in use \\(EADDRINUSE\\)`));
    assert.doesNotMatch(stderr, /setupListenHandle/);
  } finally {
    holder.close();
  }
});
