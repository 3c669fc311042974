/**
 * Controlled credentials for tests: an asymmetric key pair and a minter that
 * signs claims the way src/auth/credential-issuer.ts does — but lets a test
 * bend any claim (lifetime, iss, aud, call binding…) to probe the CLI.
 */
import { SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { randomUUID } from 'node:crypto';
import { ACTIONS } from '../../src/protocol/action-table.js';

export interface TestKeyPair {
  alg: 'EdDSA' | 'ES256';
  privateKey: CryptoKey;
  /** The private half as a JWK (what must never be accepted as a verify key). */
  privateJwk: JWK;
  /** The public half, shaped like the daemon's: `{kty, crv, x, alg, use}`. */
  publicJwk: JWK;
}

/** A fresh key pair: Ed25519 by default, P-256 for `ES256`. */
export async function generateTestKeyPair(alg: 'EdDSA' | 'ES256' = 'EdDSA'): Promise<TestKeyPair> {
  const { privateKey, publicKey } =
    alg === 'EdDSA'
      ? await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true })
      : await generateKeyPair('ES256', { extractable: true });
  const privateJwk = await exportJWK(privateKey);
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), alg, use: 'sig' };
  return { alg, privateKey, privateJwk, publicJwk };
}

/** The key pair every test trusts unless it says otherwise. */
export const TEST_KEY_PAIR: TestKeyPair = await generateTestKeyPair();
/** The public JWK the CLI verifies with (PROJECT_CLI_VERIFY_KEY). */
export const TEST_VERIFY_JWK: JWK = TEST_KEY_PAIR.publicJwk;
export const TEST_VERIFY_KEY_JSON: string = JSON.stringify(TEST_VERIFY_JWK);

export interface CallBinding {
  thread_id: string;
  tool_call_id: string;
  args_sha256: string;
}

export interface MintOptions {
  sub: string;
  actions: readonly string[];
  /** exp − iat when neither is given explicitly. Default 300 s, as the daemon issues. */
  lifetimeS?: number;
  /** Seconds since the epoch; default now. */
  iat?: number;
  /** Seconds since the epoch; default iat + lifetimeS. */
  exp?: number;
  iss?: string;
  aud?: string | string[];
  jti?: string;
  call?: CallBinding;
  job_id?: string;
  /** The signing key; default TEST_KEY_PAIR. */
  key?: TestKeyPair;
}

/**
 * Records a key's public half in a database, as `serve` does for its signing
 * key: project-cli trusts only recorded keys (contract section 6).
 */
export async function recordTrustedKey(dbFile: string, key: TestKeyPair = TEST_KEY_PAIR): Promise<void> {
  const kid = await calculateJwkThumbprint(key.publicJwk);
  const store = openSqliteStore(dbFile);
  try {
    await store.transaction((tx) => tx.credentialKeys.record(kid, key.publicJwk as Record<string, unknown>));
  } finally {
    await store.close();
  }
}

/** Signs a controlled credential (a JWT) like the daemon's issuer does. */
export async function mintCredential(opts: MintOptions): Promise<string> {
  const key = opts.key ?? TEST_KEY_PAIR;
  const iat = opts.iat ?? Math.floor(Date.now() / 1000);
  const exp = opts.exp ?? iat + (opts.lifetimeS ?? 300);
  const claims: Record<string, unknown> = { actions: [...opts.actions] };
  if (opts.job_id !== undefined) claims.job_id = opts.job_id;
  if (opts.call !== undefined) claims.call = opts.call;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, typ: 'JWT' })
    .setIssuer(opts.iss ?? 'toolgate')
    .setAudience(opts.aud ?? 'project_cli')
    .setSubject(opts.sub)
    .setJti(opts.jti ?? randomUUID())
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(key.privateKey);
}

/** Every action of the table, in its order, for credentials that should not be the limiting factor. */
export const ALL_ACTIONS: readonly string[] = Object.keys(ACTIONS);
