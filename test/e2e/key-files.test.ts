/**
 * Key files and the database target get the config file's guard (contract
 * section 21): a key file must be a regular file of at most 1 MiB — a FIFO or
 * /dev/zero used to hang `serve` or `project-cli` — and a TOOLGATE_DB that is
 * neither a path nor a postgres:// URL is refused. Each refusal is one line
 * on stderr and exit 2, at once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_CLI_BIN, TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { TEST_BEARER_SECRET } from '../helpers/tokens.js';

/** A run that must end by itself: a hang is killed after 10 s and fails the test (status null). */
function run(bin: string, args: string[], env: Record<string, string>, cwd = tempDir()): { status: number | null; stderr: string; stdout: string } {
  const r = spawnSync(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: tempDir(), ...env },
    encoding: 'utf8',
    input: '',
    cwd,
    timeout: 10_000,
  });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

function fifo(): string {
  const path = join(tempDir(), 'key.fifo');
  execFileSync('mkfifo', [path]);
  return path;
}

function big(): string {
  const path = join(tempDir(), 'big.json');
  writeFileSync(path, `{"keys":[],"pad":"${'x'.repeat(1024 * 1024)}"}`);
  return path;
}

function emptyJwks(): string {
  const path = join(tempDir(), 'empty.json');
  writeFileSync(path, '{"keys":[]}');
  return path;
}

const oneLine = (stderr: string) => stderr.trimEnd().split('\n');

test('serve: TOOLGATE_BEARER_JWKS and TOOLGATE_CREDENTIAL_KEY_FILE must be regular files of at most 1 MiB', () => {
  const db = () => join(tempDir(), 't.db');
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['a FIFO as the JWKS', { TOOLGATE_BEARER_JWKS: fifo() }, /^toolgate: TOOLGATE_BEARER_JWKS: .*key\.fifo: not a regular file$/],
    ['/dev/zero as the JWKS', { TOOLGATE_BEARER_JWKS: '/dev/zero' }, /^toolgate: TOOLGATE_BEARER_JWKS: \/dev\/zero: not a regular file$/],
    ['a JWKS over 1 MiB', { TOOLGATE_BEARER_JWKS: big() }, /^toolgate: TOOLGATE_BEARER_JWKS: .*big\.json: larger than 1048576 bytes \(1 MiB\)$/],
    ['a JWKS with no keys', { TOOLGATE_BEARER_JWKS: emptyJwks() }, /^toolgate: TOOLGATE_BEARER_JWKS: .*empty\.json: no key that can verify a token/],
    ['a FIFO as the signing key', { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_CREDENTIAL_KEY_FILE: fifo() }, /^toolgate: TOOLGATE_CREDENTIAL_KEY_FILE: .*key\.fifo: not a regular file$/],
    ['/dev/zero as the signing key', { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_CREDENTIAL_KEY_FILE: '/dev/zero' }, /^toolgate: TOOLGATE_CREDENTIAL_KEY_FILE: \/dev\/zero: not a regular file$/],
  ];
  for (const [what, env, line] of cases) {
    const r = run(TOOLGATE_BIN, ['serve', '--stdio', '--db', db()], env);
    assert.equal(r.status, 2, `${what}: exit 2 (${r.stderr})`);
    assert.equal(oneLine(r.stderr).length, 1, `${what}: one line`);
    assert.match(oneLine(r.stderr)[0]!, line, what);
  }
});

test('project-cli: a PROJECT_CLI_VERIFY_KEY_FILE that is a FIFO or /dev/zero is one line on stderr, exit 2', () => {
  for (const path of [fifo(), '/dev/zero']) {
    const r = run(PROJECT_CLI_BIN, ['calendar', 'read', '--mode', 'day', '--date', '2026-04-21'], {
      PROJECT_CLI_CREDENTIAL: 'x.y.z',
      TOOLGATE_DB: join(tempDir(), 't.db'),
      PROJECT_CLI_VERIFY_KEY_FILE: path,
    });
    assert.equal(r.status, 2, r.stderr);
    assert.deepEqual(oneLine(r.stderr), [`project-cli: PROJECT_CLI_VERIFY_KEY_FILE: ${path}: not a regular file`]);
    assert.equal(r.stdout, '');
  }
});

test('TOOLGATE_DB that is neither a path nor a postgres:// URL is refused in one line, exit 2, creating nothing', () => {
  for (const target of ['file:///etc/passwd', 'file:t.db', 'sqlite:///tmp/t.db', 'mysql://u@h/db']) {
    const cwd = tempDir();
    const r = run(TOOLGATE_BIN, ['serve', '--stdio'], { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_DB: target }, cwd);
    assert.equal(r.status, 2, `${target}: ${r.stderr}`);
    assert.equal(oneLine(r.stderr).length, 1, target);
    assert.match(oneLine(r.stderr)[0]!, /^toolgate: TOOLGATE_DB: .* is neither a file path nor a postgres:\/\/ URL$/, target);
    assert.ok(!existsSync(join(cwd, target.split(':')[0]! + ':')), `${target}: no folder created`);
    const cli = run(PROJECT_CLI_BIN, ['calendar', 'read', '--mode', 'day', '--date', '2026-04-21'], { PROJECT_CLI_CREDENTIAL: 'x.y.z', TOOLGATE_DB: target }, cwd);
    assert.notEqual(cli.status, 0, target);
    assert.match(cli.stdout, /neither a file path nor a postgres:\/\/ URL/, target);
  }
});

test('http.public_url with a " or \\ (unsafe in the WWW-Authenticate quoted string) is refused at config load, one line, exit 2', () => {
  for (const url of ['https://tools.example.com/a"b', 'https://tools.example.com/a\\b', 'https://tools.example.com/x", error="evil']) {
    const dir = tempDir();
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ agents: { default: { enabled_skills: [], allowed_actions: [] } }, auth: { issuer: 'https://id.example.com' }, http: { public_url: url } }));
    const r = run(TOOLGATE_BIN, ['serve', '--ws', '--port', '0', '--config', config, '--db', join(dir, 't.db')], {});
    assert.equal(r.status, 2, `${url}: ${r.stderr}`);
    assert.equal(oneLine(r.stderr).length, 1, url);
    assert.match(oneLine(r.stderr)[0]!, /http\.public_url: .*" or \\/, url);
  }
});
