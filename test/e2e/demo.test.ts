/**
 * The README's first command ends in `toolgate demo`: it must run start to
 * finish against the real daemon, twice on one database, and show what it
 * promises.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { mintBearer } from '../helpers/tokens.js';

test('toolgate demo plays the scripted session, checks the history byte for byte, and can run again', () => {
  const db = join(tempDir(), 'data', 'toolgate.db');
  for (let run = 0; run < 2; run++) {
    const r = spawnSync(process.execPath, [TOOLGATE_BIN, 'demo', '--db', db], { env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: dirname(db) }, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    for (const step of ['1. initialize', '2. session/open', '4. tool/invoke calendar.create', '9. history/get', '10. shutdown + exit']) {
      assert.ok(r.stdout.includes(step), `shows step "${step}"`);
    }
    assert.match(r.stdout, /⇠ tool\/result {2}\(notification 1 of 1, arrived before the response\)/);
    assert.equal((r.stdout.match(/history content === the text tool\/invoke returned/g) ?? []).length, 3);
    assert.match(r.stdout, /INVALID_ACTION_INPUT/);
    // The session's token is shown redacted; only the final inspector token is printed whole.
    const tokens = r.stdout.match(/eyJ[\w-]+\.[\w-]+\.[\w-]+/g) ?? [];
    assert.equal(tokens.length, 1);
    assert.ok(r.stdout.trimEnd().endsWith(tokens[0]!));
  }
});

test('toolgate demo masks a token or configured secret in the database path it prints', async () => {
  // Contract section 5: the environment's bearer secret, the data folder's dev secret and any token stay out of
  // every line, a path the user typed included.
  const home = tempDir();
  const envSecret = 'demo-env-bearer-secret-0123456789abcdef';
  const devSecret = 'demo-dev-bearer-secret-0123456789abcdef';
  writeFileSync(join(home, 'dev-bearer-secret'), devSecret, { mode: 0o600 });
  const token = await mintBearer('someone');
  const db = join(tempDir(), `t-${token}`, `${envSecret}-${devSecret}.db`);
  mkdirSync(dirname(db));
  const r = spawnSync(process.execPath, [TOOLGATE_BIN, 'demo', '--db', db], {
    env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: home, TOOLGATE_BEARER_SECRET: envSecret },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^ {2}database {2}\S*\[redacted\]/m);
  const out = r.stdout + r.stderr;
  for (const mark of [token.split('.')[1]!.slice(0, 20), token.split('.')[2]!, envSecret, devSecret]) assert.ok(!out.includes(mark), `prints ${mark.slice(0, 12)}…`);
});

test('toolgate demo never prints the password of a PostgreSQL --db URL', () => {
  // Nothing listens on port 1: the daemon cannot start, after the demo has printed its header.
  const password = 'demo-pg-password-0123456789';
  const r = spawnSync(process.execPath, [TOOLGATE_BIN, 'demo', '--db', `postgres://u:${password}@127.0.0.1:1/demo`], {
    env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: tempDir(), TOOLGATE_BEARER_SECRET: 'demo-env-bearer-secret-0123456789abcdef' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.notEqual(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^ {2}database {2}PostgreSQL \(the URL in --db\)$/m);
  assert.ok(!(r.stdout + r.stderr).includes(password), r.stdout + r.stderr);
});
