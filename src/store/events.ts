import { randomUUID } from 'node:crypto';
import type { Db } from './database.js';
import { nowIso } from './database.js';
import type { Event } from '../protocol/actions.js';

/** The wire shape of contract section 10, declared once in src/protocol. */
export type { Event };

export interface EventFields {
  title: string;
  start_at: string;
  end_at: string;
  location?: string | null | undefined;
  description?: string | null | undefined;
}

const COLUMNS = 'e.id, e.owner_id, e.title, e.start_at, e.end_at, e.location, e.description, e.created_at, e.updated_at';

/**
 * The scope rule, written once and used inside every read query: a user sees
 * the events they own and those whose invite they accepted.
 */
const VISIBLE_TO = `(e.owner_id = @user OR EXISTS (
  SELECT 1 FROM invites i WHERE i.event_id = e.id AND i.invitee_id = @user AND i.status = 'accepted'))`;

export function createEvent(db: Db, ownerId: string, f: EventFields): Event {
  const id = `evt_${randomUUID()}`;
  const now = nowIso();
  db.prepare(
    `INSERT INTO events (id, owner_id, title, start_at, end_at, start_ms, end_ms, location, description, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(id, ownerId, f.title, f.start_at, f.end_at, Date.parse(f.start_at), Date.parse(f.end_at), f.location ?? null, f.description ?? null, now, now);
  return getOwnedEvent(db, ownerId, id)!;
}

export function getVisibleEvent(db: Db, userId: string, eventId: string): Event | undefined {
  return db.prepare(`SELECT ${COLUMNS} FROM events e WHERE e.id = @id AND ${VISIBLE_TO}`).get({ id: eventId, user: userId }) as
    | Event
    | undefined;
}

export function getOwnedEvent(db: Db, ownerId: string, eventId: string): Event | undefined {
  return db.prepare(`SELECT ${COLUMNS} FROM events e WHERE e.id = ? AND e.owner_id = ?`).get(eventId, ownerId) as
    | Event
    | undefined;
}

/** Events visible to the user that overlap [fromMs, toMs). */
export function listVisibleEvents(db: Db, userId: string, fromMs: number, toMs: number): Event[] {
  return db
    .prepare(
      `SELECT ${COLUMNS} FROM events e
        WHERE e.start_ms < @to AND e.end_ms > @from AND ${VISIBLE_TO}
        ORDER BY e.start_ms, e.id`,
    )
    .all({ user: userId, from: fromMs, to: toMs }) as Event[];
}

/** Updates an event the user owns; undefined when it is not theirs. */
export function updateOwnedEvent(db: Db, ownerId: string, eventId: string, f: EventFields): Event | undefined {
  const info = db
    .prepare(
      `UPDATE events SET title = ?, start_at = ?, end_at = ?, start_ms = ?, end_ms = ?, location = ?, description = ?, updated_at = ?
        WHERE id = ? AND owner_id = ?`,
    )
    .run(f.title, f.start_at, f.end_at, Date.parse(f.start_at), Date.parse(f.end_at), f.location ?? null, f.description ?? null, nowIso(), eventId, ownerId);
  return info.changes === 1 ? getOwnedEvent(db, ownerId, eventId) : undefined;
}

export function deleteOwnedEvent(db: Db, ownerId: string, eventId: string): boolean {
  return db.prepare('DELETE FROM events WHERE id = ? AND owner_id = ?').run(eventId, ownerId).changes === 1;
}
