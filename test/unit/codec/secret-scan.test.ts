import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { findSecret, findSecretIn, maskSecrets, tokenScanCost } from '../../../src/codec/secret-scan.js';
import { splitVariants } from '../../helpers/split-tokens.js';

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

const IGNORABLE = /[\s=\p{Cf}\p{Cc}\p{White_Space}\p{Default_Ignorable_Code_Point}]/gu;

test('a token split by whitespace or invisible characters, or padded, is found like a whole one and masked', async () => {
  const t = await jwt();
  const sig = t.split('.')[2]!;
  const variants = Object.entries(splitVariants(t));
  assert.equal(variants.length, 12);
  for (const [name, v] of variants) {
    for (const text of [v, `before ${v} after`, `see:${v}.`]) {
      assert.ok(findSecret(text), `${name}: found`);
      assert.ok(findSecretIn({ note: text }), `${name}: found in a value`);
      const masked = maskSecrets(text);
      assert.ok(!masked.replace(IGNORABLE, '').includes(sig.replace(IGNORABLE, '')), `${name}: masked (${masked.slice(0, 40)})`);
      assert.equal(findSecret(masked), null, `${name}: nothing left after masking`);
    }
  }
  // The hit's offsets are those of the original text.
  const spaced = `x ${t.split('.').join('. ')} !`;
  assert.deepEqual(findSecret(spaced), { kind: 'token', start: 2, end: spaced.length - 2 });
});

/** A seeded generator, so the samples are the same on every run. */
function prng(seed: number) {
  let x = seed >>> 0;
  return () => ((x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0), x / 2 ** 32);
}

test('prose, code and base64 data (wrapped, padded, dotted) are not taken for tokens', () => {
  const r = prng(21);
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(r() * 256)));
  const samples = [
    'Meet at 10.30. Bring the Q3.final.pdf. See you = me.',
    'The U.S. e.g. i.e. etc. are abbreviations. A.B. C.D. = fine.',
    'Dr. Smith said: "Call me at 555.123.4567." Then he left.\u200bOK.',
    'const x = a.b.c(d).e; if (y.z === w.v) { return q.r.s; } // done.',
    'self.config.path = os.path.join(base.dir, "a.b.c")\nprint(self.config.path)',
    'SELECT t.a, u.b FROM s.t JOIN s.u ON t.id = u.id WHERE x.y = 1;',
    'https://example.com/a.b.c?x=y.z&w=1.2.3 and ftp://h.i.j/k.l.m',
    `${'lorem ipsum dolor sit amet. '.repeat(200)}`,
  ];
  for (let i = 0; i < 60; i++) {
    const blob = bytes(200 + Math.floor(r() * 3000));
    const std = blob.toString('base64').match(/.{1,76}/g)!.join('\n');
    const url = blob.toString('base64url').match(/.{1,76}/g)!.join('\n');
    samples.push(`Attached: ${std}. That is the file. Next.`, `data. ${url}. ${url.slice(0, 40)}== . end.`, `${url.replace(/\n/g, '.')}.x.y`);
  }
  for (const text of samples) {
    assert.equal(findSecret(text), null, text.slice(0, 80));
    assert.equal(maskSecrets(text), text);
  }
});

test('the scan of split-token input does work linear in its length (counted, not timed)', () => {
  const cases: Array<(n: number) => string> = [
    (n) => 'a. '.repeat(n / 3),
    (n) => `${'ew '.repeat(n / 3)}.x.`,
    (n) => `${'eyJ\u200b'.repeat(n / 4)}..`,
    (n) => `${`${b64('{"alg":"HS256"}')} `.repeat(n / 21)}.x.`,
    (n) => `${b64(`{"a":${' '.repeat(n / 2)}`)}\n.x.`,
    (n) => `${'e w o = '.repeat(n / 8)}.${'ewo\n'.repeat(n / 8)}.`,
    (n) => `${b64('{"x":1}')} .`.repeat(n / 12),
    // A run that decodes to spaces then `}`: every group's start is in the same stretch of spaces.
    (n) => `${b64(`${' '.repeat((n * 3) / 4)}}`)}.a.b`,
    // The same with a `{` in the middle: the spaces after it are walked once, not once per group.
    (n) => `${b64(`${' '.repeat((n * 3) / 8)}{${' '.repeat((n * 3) / 8)}}`)}.a.b`,
  ];
  // 256 KiB against 128 KiB: work that grows faster than the input shows at any doubling (a quadratic
  // scan does 4× the work), and at a quarter of a MiB the cases cost the suite a quarter of the time.
  const SIZE = 256 * 1024;
  for (const [i, make] of cases.entries()) {
    const small = tokenScanCost(make(SIZE / 2));
    const large = tokenScanCost(make(SIZE));
    assert.ok(large <= 40 * SIZE, `case ${i}: ${large} units for 256 KiB`);
    assert.ok(large <= 2.5 * small + 1000, `case ${i}: doubling the input took ${large} units after ${small}`);
  }
});
