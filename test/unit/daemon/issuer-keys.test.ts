/**
 * The cache of `auth.issuer`'s signing keys (src/auth/issuer-keys.ts), with
 * a clock the test moves: stale-if-error past the cache's age, one fetch per
 * cooldown whoever asks, and documents bounded to 1 MiB.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { decodeProtectedHeader, type CompactJWSHeaderParameters, type FlattenedJWSInput, type JWTVerifyGetKey } from 'jose';
import { CACHE_MAX_AGE_MS, COOLDOWN_MS, IssuerUnavailable, issuerKeys, STALE_IF_ERROR_MS } from '../../../src/auth/issuer-keys.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { startTestIssuer } from '../../helpers/oauth-issuer.js';

const quiet = createLogger(() => {}, 'error');
const jws = (token: string): FlattenedJWSInput => {
  const [protectedHeader, payload, signature] = token.split('.') as [string, string, string];
  return { protected: protectedHeader, payload, signature };
};
const headerOf = (token: string) => decodeProtectedHeader(token) as CompactJWSHeaderParameters;
/** The key for `token`, as jwtVerify asks for it. */
const keyFor = async (keys: JWTVerifyGetKey, token: string): Promise<unknown> => keys(headerOf(token), jws(token));

test('stale-if-error: while the JWKS fails, cached keys verify until CACHE_MAX_AGE + STALE_IF_ERROR, then 503', async () => {
  const issuer = await startTestIssuer();
  let now = 1_000_000;
  const keys = issuerKeys(issuer.issuer, issuer.jwksUrl, quiet, { now: () => now });
  try {
    const token = await issuer.mint('u', { aud: 'x' });
    assert.ok(await keyFor(keys, token));
    issuer.failJwks = true;
    now += CACHE_MAX_AGE_MS + 1;
    assert.ok(await keyFor(keys, token), 'past the cache age, the issuer down: the cached key still serves');
    assert.equal(issuer.jwksFetches, 2, 'one refetch, at the cache age');
    now += 1;
    assert.ok(await keyFor(keys, token));
    assert.equal(issuer.jwksFetches, 2, 'no second refetch within the cooldown');
    now += STALE_IF_ERROR_MS;
    await assert.rejects(keyFor(keys, token), IssuerUnavailable, 'past the stale-if-error window');
    issuer.failJwks = false;
    now += COOLDOWN_MS;
    assert.ok(await keyFor(keys, token), 'recovered once the JWKS answers');
  } finally {
    await issuer.close();
  }
});

test('unknown kids: one fetch per cooldown whoever asks; during an outage they get IssuerUnavailable, cached keys keep working', async () => {
  const issuer = await startTestIssuer();
  let now = 1_000_000;
  const keys = issuerKeys(issuer.issuer, issuer.jwksUrl, quiet, { now: () => now });
  try {
    const good = await issuer.mint('u', { aud: 'x' });
    const unknown = await issuer.mint('u', { aud: 'x', foreignKey: true });
    assert.ok(await keyFor(keys, good));
    now += COOLDOWN_MS;
    // The issuer up: the unknown kid is the token's problem (no such key), one fetch per cooldown.
    for (let i = 0; i < 20; i++) {
      await assert.rejects(keyFor(keys, unknown), { code: 'ERR_JWKS_NO_MATCHING_KEY' });
      assert.ok(await keyFor(keys, good));
    }
    assert.equal(issuer.jwksFetches, 2);
    // The issuer down: an unknown kid cannot be told from a rotated key — unavailable, not invalid.
    issuer.failJwks = true;
    now += COOLDOWN_MS;
    for (let i = 0; i < 20; i++) {
      await assert.rejects(keyFor(keys, unknown), IssuerUnavailable);
      assert.ok(await keyFor(keys, good), 'a cached key keeps working');
    }
    assert.equal(issuer.jwksFetches, 3, 'one failed fetch in the cooldown');
  } finally {
    await issuer.close();
  }
});

test('a JWKS or metadata document over 1 MiB is refused without reading it whole', async () => {
  let sent = 0;
  const server = createServer((req, res) => {
    if (req.url === '/declared') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(200 * 1024 * 1024) });
      res.write('{"keys":[');
      return;
    }
    // An endless chunked body: only a reader that stops can finish.
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = () => {
      while (!res.destroyed && res.write(chunk)) sent += chunk.length;
      if (!res.destroyed) res.once('drain', pump);
    };
    res.on('close', () => res.removeAllListeners('drain'));
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  try {
    const token = 'eyJhbGciOiJFUzI1NiIsImtpZCI6ImsifQ.e30.c2ln';
    const started = Date.now();
    await assert.rejects(keyFor(issuerKeys(base, `${base}/endless`, quiet), token), IssuerUnavailable);
    assert.ok(Date.now() - started < 4_000, 'refused before the fetch timeout');
    assert.ok(sent < 16 * 1024 * 1024, `stopped reading early (${sent} bytes sent)`);
    await assert.rejects(keyFor(issuerKeys(base, `${base}/declared`, quiet), token), IssuerUnavailable);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
