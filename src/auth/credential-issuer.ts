import { SignJWT, calculateJwkThumbprint, importJWK, type JWK, type CryptoKey } from 'jose';
import { newRowId } from '../store/ids.js';
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import type { CredentialIssuance } from '../store/store.js';
import { CREDENTIAL_AUDIENCE, CREDENTIAL_ISSUER, type CredentialClaims } from '../cli-router/credential.js';
import { readOrCreateSecretFile } from '../config/data-dir.js';
import { readKeyFile } from './bearer-auth.js';
import { ConfigError } from '../config/config-error.js';

export { SIGNING_KEY_FILE } from './local-secrets.js';
import { SIGNING_KEY_FILE } from './local-secrets.js';
import { isoOfMs } from '../store/iso-time.js';
/** Five minutes: inside the contract's 5–10 minute window, and long enough for the per-call timeout. */
export const CREDENTIAL_LIFETIME_S = 300;

export interface SigningKey {
  privateKey: CryptoKey;
  /** The public half as a JWK: the only key project-cli ever sees. */
  publicJwk: JWK;
  alg: 'EdDSA' | 'ES256';
  /** RFC 7638 thumbprint of the public key: its id in the database's `credential_keys` and in each credential's header. */
  kid: string;
  /** The private scalar (JWK `d`), kept only so that text carrying it verbatim can be refused. */
  privateD?: string;
}

/**
 * Loads the daemon's asymmetric signing key: TOOLGATE_CREDENTIAL_KEY_FILE
 * (a private JWK), else `credential-signing-key.jwk` in the data folder,
 * generated as Ed25519 with 0600 permissions on first run.
 */
export async function loadSigningKey(env: NodeJS.ProcessEnv, dataDir: string): Promise<SigningKey> {
  let text: string;
  if (env.TOOLGATE_CREDENTIAL_KEY_FILE) {
    text = readKeyFile('TOOLGATE_CREDENTIAL_KEY_FILE', env.TOOLGATE_CREDENTIAL_KEY_FILE);
  } else {
    // A key pair is made only when the file does not exist yet (readOrCreateSecretFile calls this then).
    text = readOrCreateSecretFile(join(dataDir, SIGNING_KEY_FILE), freshKeyJwk);
  }
  let jwk: JWK;
  try {
    jwk = JSON.parse(text) as JWK;
  } catch {
    throw new ConfigError('the credential signing key is not JWK JSON');
  }
  const alg = jwk.kty === 'OKP' && jwk.crv === 'Ed25519' ? 'EdDSA' : jwk.kty === 'EC' && jwk.crv === 'P-256' ? 'ES256' : null;
  if (!alg || !jwk.d) throw new ConfigError('the credential signing key must be a private Ed25519 or P-256 JWK');
  const privateKey = (await importJWK(jwk, alg)) as CryptoKey;
  const { d: _private, ...publicJwk } = jwk;
  const kid = await calculateJwkThumbprint(publicJwk);
  return { privateKey, publicJwk: { ...publicJwk, alg, use: 'sig' }, alg, kid, privateD: jwk.d };
}

/**
 * A new private Ed25519 JWK (`{kty: "OKP", crv: "Ed25519", x, d}`), made synchronously by node:crypto.
 *
 * Encoded as JWK by the key-generation job itself, never by `keyObject.export({ format: 'jwk' })` on the
 * key it returned: Node's JWK export holds the key's mutex while it allocates, and the finished job's
 * destructor (run by the garbage collector once the job is unreachable) takes that same mutex. A
 * collection landing inside the export deadlocked the thread for good — a daemon starting in a fresh data
 * folder hung before it read stdin, rarely, more often under load. Encoded here, the job is alive (it is
 * the one running) for as long as the mutex is held. test/unit/auth/signing-key.test.ts forces the
 * collection into the export.
 */
function freshKeyJwk(): string {
  const { privateKey } = generateKeyPairSync('ed25519', { publicKeyEncoding: { format: 'jwk' }, privateKeyEncoding: { format: 'jwk' } });
  return JSON.stringify(privateKey);
}

export interface CredentialRequest {
  userId: string;
  actions: readonly string[];
  source: 'session' | 'automation';
  jobId: string | null;
  call: { thread_id: string; tool_call_id: string; args_sha256: string } | null;
  /** `limits.max_result_bytes`, carried to project-cli (which reads no config) as a signed claim. */
  maxResultBytes?: number | undefined;
}

/** A credential issued for one call: its exact claims, and the audit row (never the token). */
export interface Issued {
  claims: CredentialClaims;
  audit: CredentialIssuance;
}

/**
 * Issues a short-lived controlled credential's claims (contract §7): the
 * caller writes `audit` in the same unit of work that uses the credential.
 * In-process the claims object goes to the CLI core as it is; for a child
 * process it is signed (`signCredential`).
 */
export function issueClaims(req: CredentialRequest): Issued {
  // Time-ordered like every row id: the audit table is keyed by it (src/store/ids.ts).
  const jti = newRowId('');
  const iat = Math.floor(Date.now() / 1000);
  const exp = iat + CREDENTIAL_LIFETIME_S;
  const claims: CredentialClaims = {
    iss: CREDENTIAL_ISSUER,
    aud: CREDENTIAL_AUDIENCE,
    sub: req.userId,
    jti,
    iat,
    exp,
    actions: [...req.actions],
  };
  if (req.jobId) claims.job_id = req.jobId;
  if (req.call) claims.call = req.call;
  if (req.maxResultBytes) claims.max_result_bytes = req.maxResultBytes;
  return {
    claims,
    audit: {
      jti,
      subject: req.userId,
      source: req.source,
      jobId: req.jobId,
      actions: req.actions,
      threadId: req.call?.thread_id ?? null,
      toolCallId: req.call?.tool_call_id ?? null,
      issuedAt: isoOfMs(iat * 1000),
      expiresAt: isoOfMs(exp * 1000),
    },
  };
}

/** Signs issued claims as the JWT a project-cli process receives in its environment; `kid` names the recorded key. */
export function signCredential(claims: CredentialClaims, key: SigningKey): Promise<string> {
  return new SignJWT({ ...claims }).setProtectedHeader({ alg: key.alg, typ: 'JWT', kid: key.kid }).sign(key.privateKey);
}
