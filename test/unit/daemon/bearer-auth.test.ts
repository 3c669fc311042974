/**
 * User bearer tokens as an identity provider issues them: HS256 with a shared
 * secret, or asymmetric keys published as a JWKS; `iss`/`aud` only when
 * configured; first-seen users provisioned from claims.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dbRows } from '../../helpers/db.js';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import type { ResponseError } from 'vscode-jsonrpc/node';
import { openSession } from '../../helpers/host.js';
import { startInProcess } from '../../helpers/in-process.js';
import { mintBearer, TEST_BEARER_SECRET } from '../../helpers/tokens.js';
import { tempDir } from '../../helpers/repo.js';

const refused = (p: Promise<unknown>) => p.then(() => assert.fail('expected -32001'), (e: ResponseError<unknown>) => assert.equal(e.code, -32001));

test('with a JWKS, ES256 tokens from the issuer work and an HS256 token is refused', async () => {
  const dir = tempDir();
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'issuer-1', alg: 'ES256', use: 'sig' };
  const jwksPath = join(dir, 'jwks.json');
  writeFileSync(jwksPath, JSON.stringify({ keys: [jwk] }));
  const host = await startInProcess({ executor: 'subprocess', dataDir: dir, env: { TOOLGATE_BEARER_SECRET: '', TOOLGATE_BEARER_JWKS: jwksPath } });
  try {
    const es256 = await new SignJWT({ name: 'Nora', phone: '+15550707' })
      .setProtectedHeader({ alg: 'ES256', kid: 'issuer-1' }).setSubject('nora').setIssuedAt().setExpirationTime('10m').sign(privateKey);
    const s = await openSession(host, es256);
    assert.equal(s.user_id, 'nora');
    await refused(host.request('session/open', { auth: { type: 'bearer', token: await mintBearer('nora') } }));
    const alg = (await host.request('session/open', { auth: { type: 'bearer', token: es256.replace(/^[^.]+/, Buffer.from('{"alg":"none"}').toString('base64url')) } }).catch((e: unknown) => e)) as ResponseError<unknown>;
    assert.equal(alg.code, -32001, 'alg none is refused');
  } finally {
    await host.stop();
  }
  assert.deepEqual(await dbRows(host.dbPath, "SELECT id, name, phone FROM users WHERE id = 'nora'"), [{ id: 'nora', name: 'Nora', phone: '+15550707' }]);
});

test('iss and aud are checked only when configured', async () => {
  const host = await startInProcess({ executor: 'subprocess', env: { TOOLGATE_BEARER_ISSUER: 'https://idp.example', TOOLGATE_BEARER_AUDIENCE: 'toolgate' } });
  try {
    await host.request('initialize', { protocol_version: '1' });
    const secret = new TextEncoder().encode(TEST_BEARER_SECRET);
    const make = (iss: string | null, aud: string | null) => {
      let j = new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('olly').setIssuedAt().setExpirationTime('10m');
      if (iss) j = j.setIssuer(iss);
      if (aud) j = j.setAudience(aud);
      return j.sign(secret);
    };
    const ok = await host.request<{ user_id: string }>('session/open', { auth: { type: 'bearer', token: await make('https://idp.example', 'toolgate') } });
    assert.equal(ok.user_id, 'olly');
    await refused(host.request('session/open', { auth: { type: 'bearer', token: await make('https://evil.example', 'toolgate') } }));
    await refused(host.request('session/open', { auth: { type: 'bearer', token: await make('https://idp.example', 'other') } }));
    await refused(host.request('session/open', { auth: { type: 'bearer', token: await make(null, null) } }));
  } finally {
    await host.stop();
  }
  const plain = await startInProcess({ executor: 'subprocess' });
  try {
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('pat').setIssuer('anyone').setAudience('anything')
      .setIssuedAt().setExpirationTime('10m').sign(new TextEncoder().encode(TEST_BEARER_SECRET));
    assert.equal((await openSession(plain, token)).user_id, 'pat', 'without configuration iss/aud are not checked');
  } finally {
    await plain.stop();
  }
});
