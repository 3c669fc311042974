import type { UserClaims, UserRow, UsersRepo } from '../store.js';
import { nowIso, type Statements } from './statements.js';

export function sqliteUsers(st: Statements): UsersRepo {
  const get = (id: string) => st.get('SELECT id, name, phone, role FROM users WHERE id = ?').get(id) as UserRow | undefined;
  return {
    async provision(id: string, claims: UserClaims) {
      const now = nowIso();
      const phoneOwner = claims.phone
        ? (st.get('SELECT id FROM users WHERE phone = ?').get(claims.phone) as { id: string } | undefined)
        : undefined;
      const phone = phoneOwner && phoneOwner.id !== id ? null : (claims.phone ?? null);
      st.get(
        `INSERT INTO users (id, name, phone, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET
           name = coalesce(excluded.name, users.name),
           phone = coalesce(excluded.phone, users.phone),
           role = coalesce(excluded.role, users.role),
           updated_at = CASE WHEN coalesce(excluded.name, users.name) IS NOT users.name
                              OR coalesce(excluded.phone, users.phone) IS NOT users.phone
                              OR coalesce(excluded.role, users.role) IS NOT users.role
                             THEN excluded.updated_at ELSE users.updated_at END`,
      ).run(id, claims.name ?? null, phone, claims.role ?? null, now, now);
      return get(id)!;
    },
    async ensure(id: string) {
      const now = nowIso();
      st.get('INSERT OR IGNORE INTO users (id, created_at, updated_at) VALUES (?, ?, ?)').run(id, now, now);
    },
    async get(id: string) {
      return get(id);
    },
    async findByPhone(phone: string) {
      return st.get('SELECT id, name, phone, role FROM users WHERE phone = ?').get(phone) as UserRow | undefined;
    },
    async exists(id: string) {
      return st.get('SELECT 1 FROM users WHERE id = ?').get(id) !== undefined;
    },
  };
}
