import type { Db } from './database.js';

export interface Contact {
  user_id: string;
  name: string | null;
  phone: string | null;
}

/**
 * People the user knows: those they invited to an event and those who
 * invited them. `query` matches name or phone as a substring (LIKE with an
 * escaped pattern, bound as a parameter).
 */
export function listContacts(db: Db, userId: string, query: string | undefined, limit: number): Contact[] {
  const pattern = query === undefined ? null : `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return db
    .prepare(
      `SELECT u.id AS user_id, u.name, u.phone FROM users u
        WHERE u.id != @user AND u.id IN (
              SELECT invitee_id FROM invites WHERE inviter_id = @user
              UNION SELECT inviter_id FROM invites WHERE invitee_id = @user)
          AND (@pattern IS NULL OR u.name LIKE @pattern ESCAPE '\\' OR u.phone LIKE @pattern ESCAPE '\\')
        ORDER BY coalesce(u.name, u.id), u.id LIMIT @limit`,
    )
    .all({ user: userId, pattern, limit }) as Contact[];
}
