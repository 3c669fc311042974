import type { Db } from './database.js';
import { nowIso } from './database.js';

/**
 * The trust anchor of project-cli (contract sections 6 and 7): the public
 * halves of the keys the daemon signs controlled credentials with, recorded
 * by `serve` in the database it serves. A rotated key stays until its row is
 * deleted. `kid` is the key's RFC 7638 thumbprint; only public JWKs are kept.
 */
export interface RecordedKey {
  kid: string;
  publicJwk: Record<string, unknown>;
}

export function recordCredentialKey(db: Db, kid: string, publicJwk: Record<string, unknown>): void {
  if ('d' in publicJwk) throw new Error('only a public key may be recorded');
  const now = nowIso();
  db.prepare(
    `INSERT INTO credential_keys (kid, public_jwk, recorded_at, last_used_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (kid) DO UPDATE SET last_used_at = excluded.last_used_at`,
  ).run(kid, JSON.stringify(publicJwk), now, now);
}

export function listCredentialKeys(db: Db): RecordedKey[] {
  const rows = db.prepare('SELECT kid, public_jwk FROM credential_keys ORDER BY last_used_at DESC').all() as Array<{ kid: string; public_jwk: string }>;
  return rows.map((r) => ({ kid: r.kid, publicJwk: JSON.parse(r.public_jwk) as Record<string, unknown> }));
}
