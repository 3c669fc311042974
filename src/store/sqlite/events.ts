import { newRowId } from '../ids.js';
import type { Event, EventFields, EventPosition, EventsRepo } from '../store.js';
import { nowIso, type Statements } from './statements.js';

const FIELDS = ['id', 'owner_id', 'title', 'start_at', 'end_at', 'location', 'description', 'created_at', 'updated_at'];
const COLUMNS = FIELDS.map((c) => `e.${c}`).join(', ');
/** A write's row as the reads return it, from the statement itself (no second query). */
const RETURNING = `RETURNING ${FIELDS.join(', ')}`;

/**
 * The scope rule, written once and used inside every read query: a user sees
 * the events they own and those whose invite they accepted.
 */
const VISIBLE_TO = `(e.owner_id = @user OR EXISTS (
  SELECT 1 FROM invites i WHERE i.event_id = e.id AND i.invitee_id = @user AND i.status = 'accepted'))`;

export function sqliteEvents(st: Statements): EventsRepo {
  const getOwned = (ownerId: string, eventId: string) =>
    st.get(`SELECT ${COLUMNS} FROM events e WHERE e.id = ? AND e.owner_id = ?`).get(eventId, ownerId) as Event | undefined;
  return {
    async create(ownerId: string, f: EventFields) {
      const id = newRowId('evt_');
      const now = nowIso();
      return st.get(
        `INSERT INTO events (id, owner_id, title, start_at, end_at, start_ms, end_ms, location, description, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ${RETURNING}`,
      ).get(id, ownerId, f.title, f.start_at, f.end_at, Date.parse(f.start_at), Date.parse(f.end_at), f.location ?? null, f.description ?? null, now, now) as Event;
    },
    async getVisible(userId: string, eventId: string) {
      return st.get(`SELECT ${COLUMNS} FROM events e WHERE e.id = @id AND ${VISIBLE_TO}`).get({ id: eventId, user: userId }) as
        | Event
        | undefined;
    },
    async getOwned(ownerId: string, eventId: string) {
      return getOwned(ownerId, eventId);
    },
    async listVisible(userId: string, fromMs: number, toMs: number, after: EventPosition | null, limit: number) {
      if (after === null) {
        return st
          .get(
            `SELECT ${COLUMNS} FROM events e
              WHERE e.start_ms < @to AND e.end_ms > @from AND ${VISIBLE_TO}
              ORDER BY e.start_ms, e.id LIMIT @limit`,
          )
          .all({ user: userId, from: fromMs, to: toMs, limit }) as Event[];
      }
      return st
        .get(
          `SELECT ${COLUMNS} FROM events e
            WHERE e.start_ms < @to AND e.end_ms > @from AND ${VISIBLE_TO}
              AND (e.start_ms > @after_ms OR (e.start_ms = @after_ms AND e.id > @after_id))
            ORDER BY e.start_ms, e.id LIMIT @limit`,
        )
        .all({ user: userId, from: fromMs, to: toMs, limit, after_ms: after.startMs, after_id: after.id }) as Event[];
    },
    async updateOwned(ownerId: string, eventId: string, f: EventFields) {
      return st
        .get(
          `UPDATE events SET title = ?, start_at = ?, end_at = ?, start_ms = ?, end_ms = ?, location = ?, description = ?, updated_at = ?
            WHERE id = ? AND owner_id = ? ${RETURNING}`,
        )
        .get(f.title, f.start_at, f.end_at, Date.parse(f.start_at), Date.parse(f.end_at), f.location ?? null, f.description ?? null, nowIso(), eventId, ownerId) as
        | Event
        | undefined;
    },
    async deleteOwned(ownerId: string, eventId: string) {
      return st.get('DELETE FROM events WHERE id = ? AND owner_id = ?').run(eventId, ownerId).changes === 1;
    },
  };
}
