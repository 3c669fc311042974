import { newRowId } from '../ids.js';
import type { MessagePage, MessageRow, MessagesRepo, NewMessage } from '../store.js';
import { nowIso, uniquely, type Statements } from './statements.js';
import { cutChars, cutContent, rowsWithin, type RowSize } from '../byte-budget.js';

const COLUMNS = 'id, user_id, thread_id, thread_seq, role, content, metadata, tool_call_id, status, created_at';
const COLUMNS_NO_METADATA = "id, user_id, thread_id, thread_seq, role, content, '{}' AS metadata, tool_call_id, status, created_at";
/** A row too large for its page's budget: the start of its content, no metadata, and its full size. */
const COLUMNS_CUT =
  "id, user_id, thread_id, thread_seq, role, substr(content, 1, ?) AS content, '{}' AS metadata, tool_call_id, status, created_at, octet_length(content) AS bytes";
const SIZE = 'thread_seq, octet_length(content) + octet_length(metadata) AS bytes';

export function sqliteMessages(st: Statements): MessagesRepo {
  const seqOf = (userId: string, threadId: string, messageId: string) =>
    (st.get('SELECT thread_seq FROM messages WHERE id = ? AND user_id = ? AND thread_id = ?').get(messageId, userId, threadId) as
      | { thread_seq: number }
      | undefined)?.thread_seq;
  const readCut = (userId: string, threadId: string, seq: number, maxBytes: number): MessageRow => {
    const { bytes, ...row } = st
      .get(`SELECT ${COLUMNS_CUT} FROM messages WHERE user_id = ? AND thread_id = ? AND thread_seq = ?`)
      .get(cutChars(maxBytes), userId, threadId, seq) as MessageRow & { bytes: number };
    return { ...row, content: cutContent(row.content, bytes), cut: true };
  };
  return {
    async insert(m: NewMessage): Promise<MessageRow> {
      const id = newRowId('msg_');
      const now = nowIso();
      // One statement claims the thread (when new), bumps it and hands out the next thread_seq — and the
      // message's time, under the write lock and never below the thread's last one, so created_at never
      // decreases along the thread's order (even if the clock steps back).
      const { last_seq: threadSeq, created_at: createdAt } = st
        .get(
          `INSERT INTO threads (user_id, id, last_seq, created_at, updated_at) VALUES (?, ?, 1, ?, ?)
           ON CONFLICT(user_id, id) DO UPDATE SET last_seq = last_seq + 1, updated_at = max(updated_at, excluded.updated_at)
           RETURNING last_seq, updated_at AS created_at`,
        )
        .get(m.userId, m.threadId, now, now) as { last_seq: number; created_at: string };
      const row: MessageRow = {
        id,
        user_id: m.userId,
        thread_id: m.threadId,
        thread_seq: threadSeq,
        role: m.role,
        content: m.content,
        metadata: m.metadataJson,
        tool_call_id: m.toolCallId ?? null,
        status: m.status ?? null,
        created_at: createdAt,
      };
      uniquely('messages_tool_call', () =>
        st
          .get(`INSERT INTO messages (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
          .run(id, row.user_id, row.thread_id, threadSeq, row.role, row.content, row.metadata, row.tool_call_id, row.status, createdAt),
      );
      return row;
    },
    async getToolMessage(userId: string, threadId: string, toolCallId: string) {
      return st
        .get(`SELECT ${COLUMNS} FROM messages WHERE user_id = ? AND thread_id = ? AND tool_call_id = ?`)
        .get(userId, threadId, toolCallId) as MessageRow | undefined;
    },
    async toolMessages(userId: string, after: readonly [string, string] | undefined, limit: number) {
      const [at, id] = after ?? ['\uffff', ''];
      return st
        .get(
          `SELECT ${COLUMNS} FROM messages WHERE user_id = ? AND tool_call_id IS NOT NULL AND (created_at < ? OR (created_at = ? AND id < ?))
           ORDER BY created_at DESC, id DESC LIMIT ?`,
        )
        .all(userId, at, at, id, limit) as MessageRow[];
    },
    async page(
      userId: string,
      threadId: string,
      before: string | undefined,
      limit: number,
      opts: { withMetadata?: boolean; maxBytes?: number } = {},
    ): Promise<MessagePage> {
      let beforeSeq = Number.MAX_SAFE_INTEGER;
      if (before !== undefined) {
        const seq = seqOf(userId, threadId, before);
        if (seq === undefined) return { rows: [], nextBefore: null };
        beforeSeq = seq;
      }
      const columns = opts.withMetadata === false ? COLUMNS_NO_METADATA : COLUMNS;
      let rows: MessageRow[];
      let hasMore: boolean;
      if (opts.maxBytes === undefined) {
        rows = st
          .get(`SELECT ${columns} FROM messages WHERE user_id = ? AND thread_id = ? AND thread_seq < ? ORDER BY thread_seq DESC LIMIT ?`)
          .all(userId, threadId, beforeSeq, limit + 1) as MessageRow[];
        hasMore = rows.length > limit;
        if (hasMore) rows.length = limit;
      } else {
        const sizes = st
          .get(`SELECT ${SIZE} FROM messages WHERE user_id = ? AND thread_id = ? AND thread_seq < ? ORDER BY thread_seq DESC LIMIT ?`)
          .all(userId, threadId, beforeSeq, limit + 1) as RowSize[];
        const fit = rowsWithin(sizes.slice(0, limit), opts.maxBytes);
        hasMore = sizes.length > fit.count;
        rows =
          fit.count === 0
            ? []
            : fit.cut
              ? [readCut(userId, threadId, sizes[0]!.thread_seq, opts.maxBytes)]
              : (st
                  .get(
                    `SELECT ${columns} FROM messages WHERE user_id = ? AND thread_id = ? AND thread_seq < ? AND thread_seq >= ? ORDER BY thread_seq DESC`,
                  )
                  .all(userId, threadId, beforeSeq, sizes[fit.count - 1]!.thread_seq) as MessageRow[]);
      }
      rows.reverse();
      return { rows, nextBefore: hasMore && rows.length > 0 ? rows[0]!.id : null };
    },
    async metadataOf(userId: string, threadId: string, ids: readonly string[]) {
      const out = new Map<string, string>();
      const stmt = st.get('SELECT metadata FROM messages WHERE id = ? AND user_id = ? AND thread_id = ?');
      for (const id of ids) {
        const r = stmt.get(id, userId, threadId) as { metadata: string } | undefined;
        if (r) out.set(id, r.metadata);
      }
      return out;
    },
    async messagesAfter(userId: string, threadId: string, afterSeq: number, limit: number, maxBytes?: number) {
      if (maxBytes === undefined) {
        return st
          .get(`SELECT ${COLUMNS} FROM messages WHERE user_id = ? AND thread_id = ? AND thread_seq > ? ORDER BY thread_seq LIMIT ?`)
          .all(userId, threadId, afterSeq, limit) as MessageRow[];
      }
      const sizes = st
        .get(`SELECT ${SIZE} FROM messages WHERE user_id = ? AND thread_id = ? AND thread_seq > ? ORDER BY thread_seq LIMIT ?`)
        .all(userId, threadId, afterSeq, limit) as RowSize[];
      const fit = rowsWithin(sizes, maxBytes);
      if (fit.count === 0) return [];
      if (fit.cut) return [readCut(userId, threadId, sizes[0]!.thread_seq, maxBytes)];
      return st
        .get(`SELECT ${COLUMNS} FROM messages WHERE user_id = ? AND thread_id = ? AND thread_seq > ? AND thread_seq <= ? ORDER BY thread_seq`)
        .all(userId, threadId, afterSeq, sizes[fit.count - 1]!.thread_seq) as MessageRow[];
    },
    async seqOf(userId: string, threadId: string, messageId: string) {
      return seqOf(userId, threadId, messageId);
    },
  };
}
