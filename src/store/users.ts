import type { Db } from './database.js';
import { nowIso } from './database.js';

export interface UserRow {
  id: string;
  name: string | null;
  phone: string | null;
  role: string | null;
}

export interface UserClaims {
  name?: string | undefined;
  phone?: string | undefined;
  role?: string | undefined;
}

/**
 * Provisions a first-seen user from token claims; a known user's claims
 * refresh their profile (the issuer is the source of truth for names/phones).
 * A phone already held by another user is not taken over: it stays with them.
 */
export function provisionUser(db: Db, id: string, claims: UserClaims): UserRow {
  const now = nowIso();
  const phoneOwner = claims.phone
    ? (db.prepare('SELECT id FROM users WHERE phone = ?').get(claims.phone) as { id: string } | undefined)
    : undefined;
  const phone = phoneOwner && phoneOwner.id !== id ? null : (claims.phone ?? null);
  db.prepare(
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
  return getUser(db, id)!;
}

/** Makes sure a user row exists (for subjects of controlled credentials). */
export function ensureUser(db: Db, id: string): void {
  const now = nowIso();
  db.prepare('INSERT OR IGNORE INTO users (id, created_at, updated_at) VALUES (?, ?, ?)').run(id, now, now);
}

export function getUser(db: Db, id: string): UserRow | undefined {
  return db.prepare('SELECT id, name, phone, role FROM users WHERE id = ?').get(id) as UserRow | undefined;
}

export function findUserByPhone(db: Db, phone: string): UserRow | undefined {
  return db.prepare('SELECT id, name, phone, role FROM users WHERE phone = ?').get(phone) as UserRow | undefined;
}

export function userExists(db: Db, id: string): boolean {
  return db.prepare('SELECT 1 FROM users WHERE id = ?').get(id) !== undefined;
}
