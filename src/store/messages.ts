import { randomUUID } from 'node:crypto';
import type { Db } from './database.js';
import { nowIso } from './database.js';
import { touchThread } from './threads.js';

export type MessageRole = 'user' | 'assistant' | 'tool';

export interface MessageRow {
  seq: number;
  id: string;
  thread_id: string;
  role: MessageRole;
  content: string;
  metadata: string;
  tool_call_id: string | null;
  status: string | null;
  created_at: string;
}

export interface NewMessage {
  threadId: string;
  role: MessageRole;
  content: string;
  metadata: unknown;
  toolCallId?: string;
  status?: string;
}

/** Inserts one message and bumps its thread, in the caller's transaction. */
export function insertMessage(db: Db, m: NewMessage): MessageRow {
  const id = `msg_${randomUUID()}`;
  const createdAt = nowIso();
  const info = db
    .prepare(
      `INSERT INTO messages (id, thread_id, role, content, metadata, tool_call_id, status, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(id, m.threadId, m.role, m.content, JSON.stringify(m.metadata ?? {}), m.toolCallId ?? null, m.status ?? null, createdAt);
  touchThread(db, m.threadId, createdAt);
  return {
    seq: Number(info.lastInsertRowid),
    id,
    thread_id: m.threadId,
    role: m.role,
    content: m.content,
    metadata: JSON.stringify(m.metadata ?? {}),
    tool_call_id: m.toolCallId ?? null,
    status: m.status ?? null,
    created_at: createdAt,
  };
}

export function getToolMessage(db: Db, threadId: string, toolCallId: string): MessageRow | undefined {
  return db
    .prepare('SELECT * FROM messages WHERE thread_id = ? AND tool_call_id = ?')
    .get(threadId, toolCallId) as MessageRow | undefined;
}

export interface MessagePage {
  rows: MessageRow[];
  /** id of the oldest row on this page when older rows exist, else null. */
  nextBefore: string | null;
}

/**
 * Newest-first paging, returned oldest-first within the page. `before` is a
 * message id of the same thread; an id from elsewhere yields an empty page.
 */
export function pageMessages(db: Db, threadId: string, before: string | undefined, limit: number): MessagePage {
  let beforeSeq = Number.MAX_SAFE_INTEGER;
  if (before !== undefined) {
    const row = db.prepare('SELECT seq FROM messages WHERE id = ? AND thread_id = ?').get(before, threadId) as
      | { seq: number }
      | undefined;
    if (!row) return { rows: [], nextBefore: null };
    beforeSeq = row.seq;
  }
  const rows = db
    .prepare('SELECT * FROM messages WHERE thread_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?')
    .all(threadId, beforeSeq, limit + 1) as MessageRow[];
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit).reverse();
  return { rows: page, nextBefore: hasMore && page.length > 0 ? page[0]!.id : null };
}

/**
 * A thread's messages after a position, oldest first (AG-UI streams replay
 * page by page). The position is `seq`, as `threadSeqOf` in
 * src/daemon/thread-events.ts reads it; the two change together.
 */
export function messagesAfter(db: Db, threadId: string, afterSeq: number, limit: number): MessageRow[] {
  return db
    .prepare('SELECT * FROM messages WHERE thread_id = ? AND seq > ? ORDER BY seq LIMIT ?')
    .all(threadId, afterSeq, limit) as MessageRow[];
}
