/**
 * Verifies the signature of a compact JWS (a controlled credential) with
 * node:crypto, synchronously, and returns its decoded header and payload.
 *
 * Why not jose here (it signs, and verifies user bearer tokens, in the
 * daemon): jose verifies through WebCrypto, and loading WebCrypto plus jose
 * is a fixed cost that every subprocess call's start-up pays (bench/RESULTS.md,
 * "start-up, per import"). The CLI needs exactly one narrow case: an
 * EdDSA (Ed25519) or ES256 signature by the daemon's public key. Everything
 * else about the token — every claim — is checked by the caller.
 *
 * Strict on shape: three base64url segments, a JSON object header whose `alg`
 * is one of the allowed ones and matches the key's type, no `crit`, a JSON
 * object payload. Anything else is refused before or instead of a verify.
 */
import { createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';

export class JwsError extends Error {
  override name = 'JwsError';
}

const SEGMENT = /^[A-Za-z0-9_-]+$/;

/** The JWS `alg` a public JWK can verify, or null for any other key. */
function algOf(jwk: JsonWebKey): 'EdDSA' | 'ES256' | null {
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return 'EdDSA';
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return 'ES256';
  return null;
}

/** Imported keys, by JWK text: the in-process executor verifies every call with the same one. */
const keys = new Map<string, KeyObject>();
const MAX_KEYS = 8;

/** A public JWK as a node:crypto key (JwsError when it is not one), remembered by its text. */
export function publicKey(jwk: JsonWebKey): KeyObject {
  const id = JSON.stringify(jwk);
  let key = keys.get(id);
  if (!key) {
    try {
      key = createPublicKey({ key: jwk, format: 'jwk' });
    } catch {
      throw new JwsError('the verify key cannot be imported');
    }
    // createPublicKey derives the public half of a private JWK: a JWK with private members is refused.
    if (key.type !== 'public' || 'd' in jwk) throw new JwsError('the verify key must be a public key');
    if (keys.size >= MAX_KEYS) keys.clear();
    keys.set(id, key);
  }
  return key;
}

function decodeObject(segment: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    throw new JwsError('not JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new JwsError('not a JSON object');
  return value as Record<string, unknown>;
}

export function verifyCompactJws(
  token: string,
  jwk: JsonWebKey,
  allowed: readonly string[],
): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((p) => SEGMENT.test(p))) throw new JwsError('not a compact JWS');
  const [h, p, s] = parts as [string, string, string];
  const header = decodeObject(h);
  const alg = algOf(jwk);
  if (alg === null || header.alg !== alg || !allowed.includes(alg)) throw new JwsError('algorithm not allowed for this key');
  if (jwk.alg !== undefined && jwk.alg !== alg) throw new JwsError('algorithm not allowed for this key');
  if ('crit' in header) throw new JwsError('unsupported critical header');
  const key = publicKey(jwk);
  const signed = Buffer.from(`${h}.${p}`, 'ascii');
  const signature = Buffer.from(s, 'base64url');
  const ok =
    alg === 'EdDSA'
      ? verify(null, signed, key, signature)
      : signature.length === 64 && verify('sha256', signed, { key, dsaEncoding: 'ieee-p1363' }, signature);
  if (!ok) throw new JwsError('signature verification failed');
  return { header, payload: decodeObject(p) };
}
