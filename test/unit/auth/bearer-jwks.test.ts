/**
 * TOOLGATE_BEARER_JWKS gets the config file's guard (contract section 21):
 * a key set none of whose keys can verify a token — empty, encryption keys
 * only, symmetric or unknown key types — is refused when the daemon starts,
 * naming the file, rather than refusing every token later.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { resolveBearerKeys } from '../../../src/auth/bearer-auth.js';
import { ConfigError } from '../../../src/config/config-error.js';
import { tempDir } from '../../helpers/repo.js';

// One key pair of each type for the file: what is checked is the key set, and an RSA pair costs ~150 ms of CPU.
const pairs = new Map<string, Record<string, unknown>>();
const publicJwk = (type: 'rsa' | 'ec' | 'ed25519' | 'x25519') => {
  const known = pairs.get(type);
  if (known) return { ...known };
  const pair =
    type === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : type === 'ec'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : type === 'ed25519'
          ? generateKeyPairSync('ed25519')
          : generateKeyPairSync('x25519');
  const jwk = pair.publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
  pairs.set(type, jwk);
  return { ...jwk };
};

const jwksFile = (set: unknown) => {
  const path = join(tempDir(), 'jwks.json');
  writeFileSync(path, JSON.stringify(set));
  return path;
};

const load = (path: string) => resolveBearerKeys({ TOOLGATE_BEARER_JWKS: path }, tempDir(), false);

test('a JWKS with no key that can verify a token is refused at start, naming the file', () => {
  const rsa = publicJwk('rsa');
  const cases: Array<[string, unknown]> = [
    ['no keys', { keys: [] }],
    ['only an encryption key (use: enc)', { keys: [{ ...rsa, use: 'enc' }] }],
    ['only a key for encryption algorithms', { keys: [{ ...rsa, alg: 'RSA-OAEP' }] }],
    ['only a key whose key_ops exclude verify', { keys: [{ ...rsa, key_ops: ['encrypt'] }] }],
    ['only an X25519 key', { keys: [publicJwk('x25519')] }],
    ['only a symmetric key', { keys: [{ kty: 'oct', k: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA' }] }],
    ['only an unknown key type', { keys: [{ kty: 'XYZ', x: 'abc' }] }],
    ['only a broken RSA key', { keys: [{ kty: 'RSA', n: 'AQAB', e: '' }] }],
  ];
  for (const [label, set] of cases) {
    const path = jwksFile(set);
    assert.throws(() => load(path), (err: unknown) => {
      assert.ok(err instanceof ConfigError, `${label}: a ConfigError (${String(err)})`);
      assert.ok(!err.message.includes('\n'), `${label}: one line`);
      assert.ok(err.message.startsWith(`TOOLGATE_BEARER_JWKS: ${path}: `), `${label}: names the file: ${err.message}`);
      assert.match(err.message, /no key that can verify a token/, label);
      return true;
    }, label);
  }
});

test('a JWKS with at least one signing key loads, beside keys it cannot use', () => {
  for (const set of [
    { keys: [publicJwk('rsa')] },
    { keys: [publicJwk('ec')] },
    { keys: [{ ...publicJwk('ed25519'), use: 'sig', alg: 'EdDSA', key_ops: ['verify'] }] },
    { keys: [{ ...publicJwk('rsa'), use: 'enc' }, publicJwk('x25519'), { kty: 'XYZ' }, { ...publicJwk('ec'), kid: 'good' }] },
  ]) {
    const keys = load(jwksFile(set));
    assert.equal(keys?.kind, 'jwks');
  }
});
