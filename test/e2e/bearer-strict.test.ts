/**
 * Contract section 13: bearer tokens must carry `exp` (and stay within
 * `auth.max_token_lifetime_s` when set); `sub` must be non-empty printable
 * text without surrounding whitespace or control characters — else -32001.
 * `dev-token` still mints tokens that pass.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT, decodeJwt } from 'jose';
import type { ResponseError } from 'vscode-jsonrpc/node';
import { openSession } from '../helpers/host.js';
import { startInProcess } from '../helpers/in-process.js';
import { TEST_BEARER_SECRET, mintBearer } from '../helpers/tokens.js';
import { TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { storedText } from '../helpers/db.js';

const key = new TextEncoder().encode(TEST_BEARER_SECRET);
const code = (p: Promise<unknown>) => p.then(() => 0, (e: ResponseError<unknown>) => e.code);

test('a token without exp, or with a sub that is blank, padded or holds control characters, is -32001', async () => {
  const host = await startInProcess({ executor: 'subprocess' });
  try {
    await host.request('initialize', { protocol_version: '1' });
    const open = (token: string) => code(host.request('session/open', { auth: { type: 'bearer', token } }));
    const noExp = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setIssuedAt().sign(key);
    assert.equal(await open(noExp), -32001, 'no exp');
    for (const sub of [' alice', 'alice ', 'alice\n', 'al\u0000ice', '\u200balice', 'ali\u202ece', '\talice', '\u00a0alice', ' ']) {
      assert.equal(await open(await mintBearer(sub)), -32001, JSON.stringify(sub));
    }
    assert.equal(await open(await mintBearer('alice smith')), 0, 'inner spaces are fine');
    assert.equal(await open(await mintBearer('Zoë-李')), 0, 'any printable script');
  } finally {
    await host.stop();
  }
});

test('a token whose sub carries a token is -32001 and names nobody; name, phone and role carrying one are not kept', async () => {
  // Contract section 7: a token never reaches the wire, the logs or the database — not even in another token's claims.
  const host = await startInProcess({ executor: 'subprocess' });
  const inner = await mintBearer('alice');
  const mark = inner.split('.')[2]!;
  try {
    await host.request('initialize', { protocol_version: '1' });
    const err = (await host.request('session/open', { auth: { type: 'bearer', token: await mintBearer(`x${inner}`) } }).catch((e: unknown) => e)) as ResponseError<unknown>;
    assert.equal(err.code, -32001);
    assert.ok(!JSON.stringify({ message: err.message, data: err.data }).includes(mark), 'not echoed');
    const claims = { name: `x${inner}`, phone: `+1 ${inner}`, role: `r${inner}` };
    const s = await openSession(host, await mintBearer('bob', claims));
    assert.equal(s.user_id, 'bob');
    const r = await host.request<{ content: Array<{ text: string }> }>('tool/invoke', {
      session_id: s.session_id, thread_id: 't', tool_call_id: 'c', args: { module: 'contacts', method: 'read', input: {} },
    });
    assert.ok(!r.content[0]!.text.includes(mark), 'contacts.read does not show it');
  } finally {
    await host.stop();
  }
  assert.ok(!JSON.stringify(host.wire).includes(mark), 'not on the wire');
  assert.ok(!host.stderr().includes(mark), 'not in stderr');
  for (const bytes of await storedText(host.dbPath, host.dataDir)) assert.ok(!bytes.includes(mark), 'not stored');
});

test('auth.max_token_lifetime_s bounds exp - iat (or exp - now without iat)', async () => {
  const dir = tempDir('toolgate-life-');
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({
    agents: { default: { enabled_skills: ['memory'], allowed_actions: ['memory.*'] } },
    auth: { max_token_lifetime_s: 3600 },
  }));
  const host = await startInProcess({ executor: 'subprocess', args: ['--config', config] });
  try {
    await host.request('initialize', { protocol_version: '1' });
    const open = (token: string) => code(host.request('session/open', { auth: { type: 'bearer', token } }));
    assert.equal(await open(await mintBearer('alice', {}, { expiresIn: '59m' })), 0);
    assert.equal(await open(await mintBearer('alice', {}, { expiresIn: '2h' })), -32001);
    const noIat = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setExpirationTime('2h').sign(key);
    assert.equal(await open(noIat), -32001);
  } finally {
    await host.stop();
  }
});

test('dev-token mints a token with exp that opens a session', async () => {
  const dir = tempDir('toolgate-devtok-');
  const r = spawnSync(process.execPath, [TOOLGATE_BIN, 'dev-token', '--user', 'dana', '--db', join(dir, 'toolgate.db')], {
    env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: tempDir(), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET }, encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  const token = r.stdout.trim();
  assert.equal(typeof decodeJwt(token).exp, 'number');
  const host = await startInProcess({ executor: 'subprocess', dataDir: dir });
  try {
    assert.equal((await openSession(host, token)).user_id, 'dana');
  } finally {
    await host.stop();
  }
});
