import { randomUUID } from 'node:crypto';
import type { Db } from './database.js';
import { nowIso } from './database.js';

export type InviteStatus = 'pending' | 'accepted' | 'rejected';

export interface InviteRow {
  invite_id: string;
  event_id: string;
  inviter_id: string;
  invitee_id: string;
  status: InviteStatus;
}

const COLUMNS = 'id AS invite_id, event_id, inviter_id, invitee_id, status';

/**
 * Invites a user to an event. Re-inviting returns the existing invite; a
 * rejected one goes back to pending (the owner asked again).
 */
export function upsertInvite(db: Db, eventId: string, inviterId: string, inviteeId: string): InviteRow {
  const now = nowIso();
  db.prepare(
    `INSERT INTO invites (id, event_id, inviter_id, invitee_id, status, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'pending', ?, ?)
     ON CONFLICT(event_id, invitee_id) DO UPDATE SET
       status = CASE WHEN invites.status = 'rejected' THEN 'pending' ELSE invites.status END,
       updated_at = excluded.updated_at`,
  ).run(`inv_${randomUUID()}`, eventId, inviterId, inviteeId, now, now);
  return db.prepare(`SELECT ${COLUMNS} FROM invites WHERE event_id = ? AND invitee_id = ?`).get(eventId, inviteeId) as InviteRow;
}

/** An invite addressed to this user; undefined for anyone else's. */
export function getInviteFor(db: Db, inviteeId: string, inviteId: string): InviteRow | undefined {
  return db.prepare(`SELECT ${COLUMNS} FROM invites WHERE id = ? AND invitee_id = ?`).get(inviteId, inviteeId) as
    | InviteRow
    | undefined;
}

export function setInviteStatus(db: Db, inviteeId: string, inviteId: string, status: InviteStatus): InviteRow | undefined {
  db.prepare('UPDATE invites SET status = ?, updated_at = ? WHERE id = ? AND invitee_id = ?').run(status, nowIso(), inviteId, inviteeId);
  return getInviteFor(db, inviteeId, inviteId);
}
