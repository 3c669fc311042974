/**
 * `authenticate` (src/auth/user-auth.ts) remembers a token verified with the
 * daemon's own keys (its HS256 secret or JWKS file, fixed while it runs) until
 * the token's `exp`: an MCP host sends the same token with every request, and
 * a verification costs ~200 µs of WebCrypto. Seen here by swapping the keys
 * under a running daemon (which a real one never does): a remembered token
 * still answers, a new one is verified with the keys it finds. A token of
 * `auth.issuer`, whose keys rotate, is verified on every request.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, type JWTPayload } from 'jose';
import { AuthError, authenticateUser } from '../../../src/auth/user-auth.js';
import { Unauthorized } from '../../../src/auth/bearer-auth.js';
import type { Services } from '../../../src/rpc/services.js';

const secretOf = (s: string) => ({ kind: 'secret' as const, secret: new TextEncoder().encode(s), origin: 'env' as const });

function daemonWith(parts: Partial<Record<'bearerKeys' | 'oauth', unknown>>) {
  const provisioned: string[] = [];
  const deps = {
    env: {},
    config: { auth: {} },
    log: { log: () => {} },
    bearerKeys: null,
    store: { transaction: async (fn: (tx: unknown) => Promise<void>) => fn({ users: { provision: async (id: string) => void provisioned.push(id) } }) },
    ...parts,
  } as unknown as Services & { bearerKeys: unknown };
  return { deps, provisioned };
}

const mint = (sub: string, secret: string, expS: number) =>
  new SignJWT({ sub }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime(expS).sign(new TextEncoder().encode(secret));

test("a token verified with the daemon's own keys is remembered; another token is verified", async () => {
  const { deps } = daemonWith({ bearerKeys: secretOf('first-secret-0123456789abcdef') });
  const exp = Math.floor(Date.now() / 1000) + 600;
  const ann = await mint('ann', 'first-secret-0123456789abcdef', exp);
  const bob = await mint('bob', 'first-secret-0123456789abcdef', exp);
  const first = await authenticateUser(deps, { token: ann });
  assert.equal(first.userId, 'ann');
  deps.bearerKeys = secretOf('other-secret-0123456789abcdef');
  assert.deepEqual(await authenticateUser(deps, { header: `Bearer ${ann}` }), first, 'answered from memory, not with the keys now in place');
  await assert.rejects(authenticateUser(deps, { token: bob }), (err) => err instanceof AuthError && err.reason === 'invalid', 'a token not seen before is verified');
});

test('a remembered token is refused from its exp on; a failure is not remembered', async (t) => {
  const { deps, provisioned } = daemonWith({ bearerKeys: secretOf('first-secret-0123456789abcdef') });
  const nowS = Math.floor(Date.now() / 1000);
  const cy = await mint('cy', 'first-secret-0123456789abcdef', nowS + 5);
  t.mock.timers.enable({ apis: ['Date'], now: nowS * 1000 });
  assert.equal((await authenticateUser(deps, { token: cy }, { provision: 'always' })).userId, 'cy');
  t.mock.timers.tick(4_999);
  assert.equal((await authenticateUser(deps, { token: cy }, { provision: 'always' })).userId, 'cy');
  assert.deepEqual(provisioned, ['cy', 'cy'], "provision: 'always' writes on every call, remembered or not");
  t.mock.timers.tick(1);
  await assert.rejects(authenticateUser(deps, { token: cy }), (err) => err instanceof AuthError && err.reason === 'invalid', 'expired at exp');
  t.mock.timers.reset();
  // A token refused once (wrong key) is verified again once the keys would take it.
  const { deps: d2 } = daemonWith({ bearerKeys: secretOf('wrong-secret-0123456789abcdef') });
  const dee = await mint('dee', 'first-secret-0123456789abcdef', nowS + 600);
  await assert.rejects(authenticateUser(d2, { token: dee }), AuthError);
  d2.bearerKeys = secretOf('first-secret-0123456789abcdef');
  assert.equal((await authenticateUser(d2, { token: dee })).userId, 'dee');
});

test('an auth.issuer token is verified on every request (its keys rotate)', async () => {
  const verified: string[] = [];
  let retired = false;
  const oauth = {
    issuer: 'https://issuer.test',
    claims: (token: string) => token.startsWith('at.'),
    verify: async (token: string): Promise<JWTPayload> => {
      verified.push(token);
      if (retired) throw new Unauthorized('invalid, expired or wrongly signed bearer token');
      return { sub: 'eve', exp: Math.floor(Date.now() / 1000) + 600 };
    },
  };
  const { deps } = daemonWith({ oauth });
  await authenticateUser(deps, { token: 'at.one' });
  await authenticateUser(deps, { token: 'at.one' });
  assert.deepEqual(verified, ['at.one', 'at.one']);
  retired = true;
  await assert.rejects(authenticateUser(deps, { token: 'at.one' }), AuthError, 'refused as soon as its key is gone');
});
