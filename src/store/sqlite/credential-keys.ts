import type { CredentialKeysRepo, RecordedKey } from '../store.js';
import { nowIso, type Statements } from './statements.js';

export function sqliteCredentialKeys(st: Statements): CredentialKeysRepo {
  return {
    async record(kid: string, publicJwk: Record<string, unknown>) {
      if ('d' in publicJwk) throw new Error('only a public key may be recorded');
      const now = nowIso();
      st.get(
        `INSERT INTO credential_keys (kid, public_jwk, recorded_at, last_used_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (kid) DO UPDATE SET last_used_at = excluded.last_used_at`,
      ).run(kid, JSON.stringify(publicJwk), now, now);
    },
    async list() {
      const rows = st.get('SELECT kid, public_jwk FROM credential_keys ORDER BY last_used_at DESC').all() as Array<{ kid: string; public_jwk: string }>;
      return rows.map((r): RecordedKey => ({ kid: r.kid, publicJwk: JSON.parse(r.public_jwk) as Record<string, unknown> }));
    },
  };
}
