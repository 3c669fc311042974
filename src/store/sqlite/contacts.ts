import type { Contact, ContactsRepo } from '../store.js';
import type { Statements } from './statements.js';

export function sqliteContacts(st: Statements): ContactsRepo {
  return {
    async list(userId: string, query: string | undefined, limit: number) {
      const pattern = query === undefined ? null : `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      return st
        .get(
          `SELECT u.id AS user_id, u.name, u.phone FROM users u
            WHERE u.id != @user AND u.id IN (
                  SELECT invitee_id FROM invites WHERE inviter_id = @user
                  UNION SELECT inviter_id FROM invites WHERE invitee_id = @user)
              AND (@pattern IS NULL OR u.name LIKE @pattern ESCAPE '\\' OR u.phone LIKE @pattern ESCAPE '\\')
            ORDER BY coalesce(u.name, u.id), u.id LIMIT @limit`,
        )
        .all({ user: userId, pattern, limit }) as Contact[];
    },
  };
}
