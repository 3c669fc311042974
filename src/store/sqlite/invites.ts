import { newRowId } from '../ids.js';
import type { InviteRow, InviteStatus, InvitesRepo } from '../store.js';
import { nowIso, type Statements } from './statements.js';

const COLUMNS = 'id AS invite_id, event_id, inviter_id, invitee_id, status';

export function sqliteInvites(st: Statements): InvitesRepo {
  const getFor = (inviteeId: string, inviteId: string) =>
    st.get(`SELECT ${COLUMNS} FROM invites WHERE id = ? AND invitee_id = ?`).get(inviteId, inviteeId) as InviteRow | undefined;
  return {
    async upsert(eventId: string, inviterId: string, inviteeId: string) {
      const now = nowIso();
      st.get(
        `INSERT INTO invites (id, event_id, inviter_id, invitee_id, status, created_at, updated_at)
         VALUES (?, ?, ?, ?, 'pending', ?, ?)
         ON CONFLICT(event_id, invitee_id) DO UPDATE SET
           status = CASE WHEN invites.status = 'rejected' THEN 'pending' ELSE invites.status END,
           updated_at = excluded.updated_at`,
      ).run(newRowId('inv_'), eventId, inviterId, inviteeId, now, now);
      return st.get(`SELECT ${COLUMNS} FROM invites WHERE event_id = ? AND invitee_id = ?`).get(eventId, inviteeId) as InviteRow;
    },
    async getFor(inviteeId: string, inviteId: string) {
      return getFor(inviteeId, inviteId);
    },
    async setStatus(inviteeId: string, inviteId: string, status: InviteStatus) {
      st.get('UPDATE invites SET status = ?, updated_at = ? WHERE id = ? AND invitee_id = ?').run(status, nowIso(), inviteId, inviteeId);
      return getFor(inviteeId, inviteId);
    },
  };
}
