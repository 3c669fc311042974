import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { maskUrlPasswords, redact } from '../../../src/codec/redact.js';

test('JWT-shaped strings are redacted wherever they sit, with or without a space after the brace', async () => {
  const token = await new SignJWT({ a: 1 }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('k'.repeat(32)));
  const spaced = `${Buffer.from('{ "alg": "HS256" }').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.c2lnbmF0dXJl`;
  const out = JSON.stringify(redact({ msg: `saw ${token}`, nested: [{ deep: spaced }], err: new Error(`bad ${token}`) }));
  assert.ok(!out.includes(token));
  assert.ok(!out.includes(spaced));
  assert.match(out, /\[redacted\]/);
});

test('values under secret keys are redacted; ordinary text is left alone', () => {
  assert.deepEqual(redact({ token: 'abc', service_key: 'k', title: 'Team sync at 10.30.45', n: 3 }), {
    token: '[redacted]', service_key: '[redacted]', title: 'Team sync at 10.30.45', n: 3,
  });
});

test('structures deeper than the limit are dropped, not written unredacted', () => {
  let deep: unknown = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.sig';
  for (let i = 0; i < 12; i++) deep = { d: deep };
  assert.ok(!JSON.stringify(redact(deep)).includes('eyJhbGci'));
});

test('a database URL’s password never reaches a log line, in a message, a field or an error', () => {
  const url = 'postgres://toolgate:s3cr%40t-pw@db.internal:5432/toolgate';
  const out = JSON.stringify(redact({ msg: `cannot open ${url}`, db: url, err: new Error(`connect ${url} failed`), list: [`postgresql://u:p@ss@h/d`] }));
  assert.ok(!out.includes('s3cr'), out);
  assert.ok(!out.includes('p@ss'), out);
  assert.match(out, /postgres:\/\/toolgate:\*\*\*@db\.internal:5432\/toolgate/);
  assert.match(out, /postgresql:\/\/u:\*\*\*@h\/d/);
  // A URL without a password, and text that only looks a little like one, are left alone.
  assert.equal(maskUrlPasswords('postgres://toolgate@db/x and http://example.com/a:b@c'), 'postgres://toolgate@db/x and http://example.com/a:b@c');
});

test('a password given as a URL query parameter (the driver accepts ?password=) is masked too', async () => {
  const { describePgUrl, pgUrlHasPassword } = await import('../../../src/store/pg/url.js');
  const { passwordInArgv } = await import('../../../src/config/data-dir.js');
  const url = 'postgres://tg@db.internal/tg?sslmode=disable&password=Qu3ry-S3cret&sslpassword=K3y-S3cret';
  const out = JSON.stringify(redact({ msg: `cannot open ${url}`, err: new Error(`connect ${url} failed`) }));
  assert.ok(!out.includes('S3cret'), out);
  assert.match(out, /sslmode=disable&password=\*\*\*&sslpassword=\*\*\*/);
  assert.ok(!describePgUrl(url).includes('S3cret'), describePgUrl(url));
  assert.ok(pgUrlHasPassword(url));
  assert.ok(passwordInArgv(url), 'a password in the query of --db is warned about like one in its userinfo');
  assert.equal(passwordInArgv('postgres://tg@db/tg?sslmode=disable'), false);
});
