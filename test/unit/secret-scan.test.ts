import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { findSecret, findSecretIn, maskSecrets } from '../../src/codec/secret-scan.js';

const b64 = (s: string) => Buffer.from(s).toString('base64url');
const jwt = () => new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode('k'.repeat(32)));

test('a token is found whatever surrounds it', async () => {
  const t = await jwt();
  for (const text of [t, `x${t}`, `auth_${t}`, `ab${t}`, `abc${t}`, `${t}x`, `-${t}-`, `a.${t}.b`, `see:${t}`, `"${t}"`, `é${t}`]) {
    assert.ok(findSecret(text), `found in ${text.slice(0, 12)}…`);
    assert.ok(!maskSecrets(text).includes(t.split('.')[2]!), 'masked');
  }
});

test('a header JSON with surrounding whitespace, unusual keys or an escaped alg counts; an empty payload or signature too', () => {
  for (const header of [' {"alg":"HS256"}', '\n{"alg":"none"} ', '{"typ":"JWT","alg":"ES256"}', '{"\\u0061lg":"HS256"}', '\u00a0{"alg":1}']) {
    for (const [p, s] of [[b64('{"sub":"x"}'), 'c2ln'], ['', 'c2ln'], [b64('{}'), '']]) {
      const token = `${b64(header)}.${p}.${s}`;
      assert.ok(findSecret(`q${token}`), `${JSON.stringify(header)} ${p ? 'p' : '-'} ${s ? 's' : '-'}`);
    }
  }
});

test('ordinary text, dotted names and JWS shapes without alg are left alone', () => {
  for (const text of [
    'Team sync at 10.30.45', 'config.yaml.bak', 'v1.2.3', 'a..b', '...', 'e30.e30.e30', `${b64('{"typ":"JWT"}')}.${b64('{}')}.sig`,
    `${b64('[1,2]')}.x.y`, 'https://example.com/a.b.c', 'ewogICJ4IjogMQp9', '',
  ]) {
    assert.equal(findSecret(text), null, text);
    assert.equal(maskSecrets(text), text);
  }
});

test('configured secrets are found verbatim; the path of a hit is reported', async () => {
  assert.deepEqual(findSecret('the key is s3cr3t-value!', ['s3cr3t-value']), { kind: 'configured_secret', start: 11, end: 23 });
  assert.equal(findSecretIn({ a: ['x', { b: 'zz s3cr3t-value' }] }, ['s3cr3t-value']), 'a.1.b');
  const t = await jwt();
  assert.equal(findSecretIn({ answer: 'ok', [`k${t}`]: 1 }), '(key)');
  assert.equal(findSecretIn({ answer: 'ok' }), null);
});

// A quadratic scan would take minutes on these; the test's timeout is the guard (no timing threshold).
test('hostile input is scanned in linear time', { timeout: 120_000 }, () => {
  const n = 1_000_000;
  const cases = [
    'ew'.repeat(n / 2) + '.' + 'x.',
    `${'e'.repeat(n)}..`,
    `${b64(`{"alg":"x","a":${'{"a":'.repeat(20_000)}`)}.x.y`,
    'a.'.repeat(n / 2),
    `${b64(' '.repeat(n / 2) + '{')}.x.`,
    `${'ewo'.repeat(n / 3)}.${'ewo'.repeat(n / 3)}.`,
  ];
  for (const text of cases) {
    findSecret(text);
    maskSecrets(text);
  }
});
