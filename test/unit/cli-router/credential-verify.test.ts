/**
 * The CLI verifies its credential with node:crypto (src/cli-router/jws.ts):
 * the same refusals a JWT library gives, for every way a token can be wrong.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { SignJWT, exportJWK, type JWK } from 'jose';
import { CredentialError, verifyCredential } from '../../../src/cli-router/credential.js';

/**
 * A key pair as KeyObjects imported from PEM: a JWK export of a KeyObject made by generateKeyPairSync can
 * deadlock the thread (a collection inside it frees the generation job, which takes the key's mutex the export
 * holds: src/auth/credential-issuer.ts, freshKeyJwk); an imported key has no such job.
 */
function keyPair(type: 'ed25519' | 'P-256'): { publicKey: KeyObject; privateKey: KeyObject } {
  const publicKeyEncoding = { type: 'spki', format: 'pem' } as const;
  const privateKeyEncoding = { type: 'pkcs8', format: 'pem' } as const;
  const pem =
    type === 'P-256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256', publicKeyEncoding, privateKeyEncoding })
      : generateKeyPairSync('ed25519', { publicKeyEncoding, privateKeyEncoding });
  return { publicKey: createPublicKey(pem.publicKey), privateKey: createPrivateKey(pem.privateKey) };
}

const ed = keyPair('ed25519');
const ec = keyPair('P-256');
const other = keyPair('ed25519');
const pub = async (k: KeyObject) => ({ ...(await exportJWK(k)) }) as JWK;

const now = () => Math.floor(Date.now() / 1000);
const good = () => ({ iss: 'toolgate', aud: 'project_cli', sub: 'u1', jti: 'j1', iat: now(), exp: now() + 300, actions: ['calendar.read'] });

async function mint(claims: Record<string, unknown>, key: KeyObject = ed.privateKey, alg = 'EdDSA', header: Record<string, unknown> = {}) {
  return new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT', ...header }).sign(key);
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

async function refused(token: string, jwk: JWK, why: RegExp) {
  await assert.rejects(verifyCredential(token, jwk), (err: unknown) => err instanceof CredentialError && why.test(err.message) && !err.message.includes(token));
}

test('a good EdDSA and a good ES256 credential verify, claims returned', async () => {
  assert.equal((await verifyCredential(await mint(good()), await pub(ed.publicKey))).sub, 'u1');
  assert.equal((await verifyCredential(await mint(good(), ec.privateKey, 'ES256'), await pub(ec.publicKey))).sub, 'u1');
  const withAlg = { ...(await pub(ed.publicKey)), alg: 'EdDSA', use: 'sig' } as JWK;
  assert.equal((await verifyCredential(await mint(good()), withAlg)).jti, 'j1');
});

test('signatures: another key, a changed payload, a changed signature, alg none, HS256 with the public key', async () => {
  const jwk = await pub(ed.publicKey);
  await refused(await mint(good(), other.privateKey), jwk, /signature or format/);
  const [h, , s] = (await mint(good())).split('.');
  await refused(`${h}.${b64({ ...good(), sub: 'admin' })}.${s}`, jwk, /signature or format/);
  const t = await mint(good());
  await refused(`${t.slice(0, -4)}AAAA`, jwk, /signature or format/);
  await refused(`${b64({ alg: 'none' })}.${b64(good())}.`, jwk, /signature or format/);
  const hsData = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(good())}`;
  const hs = createHmac('sha256', JSON.stringify(jwk)).update(hsData).digest('base64url');
  await refused(`${hsData}.${hs}`, jwk, /signature or format/);
  // An EdDSA token offered to an ES256 key, and the reverse.
  await refused(await mint(good()), await pub(ec.publicKey), /signature or format/);
  await refused(await mint(good(), ec.privateKey, 'ES256'), jwk, /signature or format/);
});

test('shape: not three segments, a header that is not JSON, a crit header, a payload that is not an object', async () => {
  const jwk = await pub(ed.publicKey);
  await refused('abc.def', jwk, /signature or format/);
  await refused('a.b.c.d', jwk, /signature or format/);
  const data = `${Buffer.from('not json').toString('base64url')}.${b64(good())}`;
  await refused(`${data}.${sign(null, Buffer.from(data), ed.privateKey).toString('base64url')}`, jwk, /signature or format/);
  const crit = `${b64({ alg: 'EdDSA', crit: ['x-bench'], 'x-bench': 1 })}.${b64(good())}`;
  await refused(`${crit}.${sign(null, Buffer.from(crit), ed.privateKey).toString('base64url')}`, jwk, /signature or format/);
  const arr = `${b64({ alg: 'EdDSA' })}.${Buffer.from('[1]').toString('base64url')}`;
  await refused(`${arr}.${sign(null, Buffer.from(arr), ed.privateKey).toString('base64url')}`, jwk, /signature or format/);
});

test('claims: issuer, audience, expiry, not-before, lifetime, issued in the future, missing ids, bad actions', async () => {
  const jwk = await pub(ed.publicKey);
  await refused(await mint({ ...good(), iss: 'someone' }), jwk, /"iss"/);
  await refused(await mint({ ...good(), aud: 'other' }), jwk, /"aud"/);
  assert.equal((await verifyCredential(await mint({ ...good(), aud: ['x', 'project_cli'] }), jwk)).sub, 'u1');
  await refused(await mint({ ...good(), iat: now() - 400, exp: now() - 100 }), jwk, /expired/);
  await refused(await mint({ ...good(), nbf: now() + 100 }), jwk, /"nbf"/);
  await refused(await mint({ ...good(), exp: now() + 3600 }), jwk, /lifetime/);
  await refused(await mint({ ...good(), iat: now() + 120, exp: now() + 420 }), jwk, /future/);
  const { jti: _j, ...noJti } = good();
  await refused(await mint(noJti), jwk, /"jti"/);
  await refused(await mint({ ...good(), exp: String(now() + 300) }), jwk, /"exp"/);
  await refused(await mint({ ...good(), actions: ['calendar.*'] }), jwk, /claims are not valid/);
  await refused(await mint({ ...good(), sub: '' }), jwk, /claims are not valid/);
});
