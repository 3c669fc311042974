/**
 * The equal-work MCP anchor's store (bench/anchors/mcp-equal-server.ts): the
 * writes a toolgate `calendar.create` makes, as a careful hand-written server
 * would make them — prepared statements, one `BEGIN IMMEDIATE` transaction a
 * call. The floor (bench/floor.ts) runs `write` alone, without the transport.
 *
 * Per call: look up `(thread, tool_call_id)` in the call table (a repeated
 * call is answered with its stored projection and writes nothing); insert an
 * audit row carrying the SHA-256 of the arguments; insert the event; insert
 * the call record with the projection; bump the thread's sequence (`INSERT …
 * ON CONFLICT DO UPDATE … RETURNING`); insert the tool message (the projection
 * text and a metadata JSON with a small UI card).
 *
 * The tables carry the keys these statements and a calendar's reads need and
 * nothing more (no foreign keys, no CHECKs beyond the event's time order).
 */
import { createHash, randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import type { z } from 'zod';
import { EVENTS_DDL, INSERT_EVENT, newEvent, type CalendarCreateInput } from './calendar-input.js';

export type Input = z.infer<typeof CalendarCreateInput>;

/** The answer of a call: the projection as text and as the object it was serialized from. */
export interface Answer {
  text: string;
  structured: Record<string, unknown>;
}

export interface EqualWorkStore {
  readonly db: Database.Database;
  /** The call's statements alone, inside a transaction the caller opened. */
  write(threadId: string, toolCallId: string, args: unknown, input: Input): Answer;
  /** One call: `write` in its own `BEGIN IMMEDIATE` … `COMMIT`. */
  call(threadId: string, toolCallId: string, args: unknown, input: Input): Answer;
}

export function openEqualWorkStore(dbFile: string, synchronous: 'FULL' | 'NORMAL'): EqualWorkStore {
  const db = new Database(dbFile);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.exec(`${EVENTS_DDL};
  CREATE INDEX IF NOT EXISTS events_owner_time ON events(owner_id, start_ms);
  CREATE TABLE IF NOT EXISTS audit (
    jti TEXT PRIMARY KEY, subject TEXT NOT NULL, thread_id TEXT NOT NULL, tool_call_id TEXT NOT NULL,
    action TEXT NOT NULL, args_sha256 TEXT NOT NULL, issued_at TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS calls (
    thread_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, action TEXT NOT NULL, args_sha256 TEXT NOT NULL,
    projection TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (thread_id, tool_call_id));
  CREATE TABLE IF NOT EXISTS threads (id TEXT PRIMARY KEY, last_seq INTEGER NOT NULL, updated_at TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS messages (
    id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, thread_seq INTEGER NOT NULL, role TEXT NOT NULL,
    content TEXT NOT NULL, metadata TEXT NOT NULL, tool_call_id TEXT, created_at TEXT NOT NULL,
    UNIQUE (thread_id, thread_seq))`);

  // A careful server prepares every statement once, transaction control included.
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  const findCall = db.prepare('SELECT projection FROM calls WHERE thread_id = ? AND tool_call_id = ?').pluck();
  const insertAudit = db.prepare(
    'INSERT INTO audit (jti, subject, thread_id, tool_call_id, action, args_sha256, issued_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const insertEvent = db.prepare(INSERT_EVENT);
  const insertCall = db.prepare(
    'INSERT INTO calls (thread_id, tool_call_id, action, args_sha256, projection, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const bumpThread = db
    .prepare(
      `INSERT INTO threads (id, last_seq, updated_at) VALUES (?, 1, ?)
       ON CONFLICT (id) DO UPDATE SET last_seq = last_seq + 1, updated_at = excluded.updated_at RETURNING last_seq`,
    )
    .pluck();
  const insertMessage = db.prepare(
    `INSERT INTO messages (id, thread_id, thread_seq, role, content, metadata, tool_call_id, created_at)
     VALUES (?, ?, ?, 'tool', ?, ?, ?, ?)`,
  );

  const write: EqualWorkStore['write'] = (threadId, toolCallId, args, input) => {
    const stored = findCall.get(threadId, toolCallId) as string | undefined;
    if (stored !== undefined) return { text: stored, structured: JSON.parse(stored) as Record<string, unknown> };
    const now = new Date().toISOString();
    const argsSha256 = createHash('sha256').update(JSON.stringify(args)).digest('hex');
    insertAudit.run(randomUUID(), 'bench', threadId, toolCallId, 'calendar.create', argsSha256, now);
    const event = newEvent(input, now);
    insertEvent.run({ ...event, start_ms: Date.parse(input.start_at), end_ms: Date.parse(input.end_at) });
    const structured = { status: 'success', module: 'calendar', method: 'create', data: { event } };
    const text = JSON.stringify(structured);
    insertCall.run(threadId, toolCallId, 'calendar.create', argsSha256, text, now);
    const seq = bumpThread.get(threadId, now) as number;
    const metadata = JSON.stringify({
      status: 'success',
      ui: { type: 'card', title: event.title, fields: [{ label: 'Starts', value: event.start_at }, { label: 'Ends', value: event.end_at }] },
    });
    insertMessage.run(`msg_${randomUUID()}`, threadId, seq, text, metadata, toolCallId, now);
    return { text, structured };
  };

  const call: EqualWorkStore['call'] = (threadId, toolCallId, args, input) => {
    begin.run();
    try {
      const answer = write(threadId, toolCallId, args, input);
      commit.run();
      return answer;
    } catch (err) {
      if (db.inTransaction) rollback.run();
      throw err;
    }
  };

  return { db, write, call };
}
