/**
 * The repositories of the store boundary (`../store.ts`) on PostgreSQL. Each
 * method is one or two parameterised statements on the unit's own pooled
 * connection; nothing is cached in memory, so every daemon sharing the
 * database sees the same truth.
 *
 * In a transaction, writes whose result is known here are held back and
 * reads name their tables (unit.ts): a call's unit is one or two statements.
 *
 * Byte-for-byte parity with SQLite where it reaches the wire: timestamps are
 * the same ISO text, text orderings use `COLLATE "C"` (SQLite's BINARY), and
 * JSON the daemon must return unchanged (tool arguments, CLI outcomes) is kept
 * as text; `messages.metadata` is `jsonb` and comes back as its text.
 */
import { newRowId } from '../ids.js';
import { nowIso } from '../database.js';
import { cutChars, cutContent, rowsWithin, type RowSize } from '../byte-budget.js';
import type {
  CredentialKeysRepo,
  RecordedKey,
  AutomationJob,
  AutomationJobsRepo,
  Contact,
  ContactsRepo,
  CredentialAuditRepo,
  Event,
  EventFields,
  EventPosition,
  ThreadPosition,
  EventsRepo,
  InviteRow,
  InvitesRepo,
  Memory,
  MemoriesRepo,
  MessagePage,
  MessageRow,
  MessagesRepo,
  NewMessage,
  QuotaLimitsRow,
  ThreadsRepo,
  ThreadSummary,
  ToolCallRecord,
  ToolCallsRepo,
  UserRow,
  UsersRepo,
} from '../store.js';
import type { CommittedMessage } from './notifier.js';
import type { HeldWrite, Query } from './unit.js';

export type { Query };

/** A write whose result the caller does not need now: held back in a transaction (unit.ts), else run at once. */
async function write(q: Query, w: HeldWrite): Promise<void> {
  if (q.hold) await q.hold(w);
  else await q(w.text, w.values);
}

/**
 * What a read of users by phone or through invites looks at: never a blank
 * row held back (no phone; invites reference only users that exist), so
 * such a read runs before the held `ensure` is sent and sees what it would
 * after.
 */
const USERS_REACHED = 'users/reached';

export class PgUsers implements UsersRepo {
  constructor(private readonly q: Query) {}

  async provision(id: string, claims: { name?: string | undefined; phone?: string | undefined; role?: string | undefined }): Promise<UserRow> {
    const now = nowIso();
    let phone: string | null = claims.phone ?? null;
    if (phone !== null) {
      const owner = await this.q<{ id: string }>('SELECT id FROM users WHERE phone = $1', [phone]);
      if (owner[0] && owner[0].id !== id) phone = null;
    }
    const rows = await this.q<UserRow>(
      `INSERT INTO users (id, name, phone, role, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
       ON CONFLICT (id) DO UPDATE SET
         name = coalesce(excluded.name, users.name),
         phone = coalesce(excluded.phone, users.phone),
         role = coalesce(excluded.role, users.role),
         updated_at = CASE WHEN coalesce(excluded.name, users.name) IS DISTINCT FROM users.name
                            OR coalesce(excluded.phone, users.phone) IS DISTINCT FROM users.phone
                            OR coalesce(excluded.role, users.role) IS DISTINCT FROM users.role
                           THEN excluded.updated_at ELSE users.updated_at END
       RETURNING id, name, phone, role`,
      [id, claims.name ?? null, phone, claims.role ?? null, now],
    );
    return rows[0]!;
  }

  async ensure(id: string): Promise<void> {
    const now = nowIso();
    await write(this.q, {
      text: 'INSERT INTO users (id, created_at, updated_at) VALUES ($1, $2, $2) ON CONFLICT (id) DO NOTHING',
      values: [id, now],
      // An id-only row: it has no phone and nothing references it before it exists (unit.ts, `users/reached`).
      writes: ['users/blank'],
      once: `users ${id}`,
    });
  }

  async get(id: string): Promise<UserRow | undefined> {
    return (await this.q<UserRow>('SELECT id, name, phone, role FROM users WHERE id = $1', [id]))[0];
  }

  async findByPhone(phone: string): Promise<UserRow | undefined> {
    return (await this.q<UserRow>('SELECT id, name, phone, role FROM users WHERE phone = $1', [phone], [USERS_REACHED]))[0];
  }

  async exists(id: string): Promise<boolean> {
    return (await this.q('SELECT 1 FROM users WHERE id = $1', [id])).length > 0;
  }
}

export class PgThreads implements ThreadsRepo {
  constructor(private readonly q: Query) {}

  async claim(userId: string, threadId: string): Promise<void> {
    const now = nowIso();
    await this.q('INSERT INTO threads (user_id, id, created_at, updated_at) VALUES ($1, $2, $3, $3) ON CONFLICT DO NOTHING', [userId, threadId, now]);
  }

  async exists(userId: string, threadId: string): Promise<boolean> {
    return (await this.q('SELECT 1 FROM threads WHERE user_id = $1 AND id = $2', [userId, threadId])).length > 0;
  }

  async list(userId: string, after: ThreadPosition | null, limit: number): Promise<ThreadSummary[]> {
    // last_seq is the message count: messages are never deleted.
    if (after === null) {
      return this.q<ThreadSummary>(
        `SELECT id AS thread_id, created_at, updated_at, last_seq AS message_count FROM threads WHERE user_id = $1
          ORDER BY updated_at COLLATE "C" DESC, id COLLATE "C" DESC LIMIT $2`,
        [userId, limit],
      );
    }
    return this.q<ThreadSummary>(
      `SELECT id AS thread_id, created_at, updated_at, last_seq AS message_count FROM threads WHERE user_id = $1
          AND (updated_at COLLATE "C" < $3 OR (updated_at = $3 AND id COLLATE "C" < $4))
        ORDER BY updated_at COLLATE "C" DESC, id COLLATE "C" DESC LIMIT $2`,
      [userId, limit, after.updatedAt, after.threadId],
    );
  }
}

/** The server's clock now (not the transaction's start), as the store writes times: `2026-01-02T03:04:05.678Z`. */
const SERVER_NOW = `to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const MESSAGE_COLUMNS = 'id, user_id, thread_id, thread_seq, role, content, metadata::text AS metadata, tool_call_id, status, created_at';
const MESSAGE_COLUMNS_NO_METADATA = `id, user_id, thread_id, thread_seq, role, content, '{}' AS metadata, tool_call_id, status, created_at`;
/** A row too large for its page's budget: the start of its content, no metadata, and its full size. */
const MESSAGE_COLUMNS_CUT = `id, user_id, thread_id, thread_seq, role, substr(content, 1, $4) AS content, '{}' AS metadata, tool_call_id, status,
  created_at, octet_length(content)::int8 AS bytes`;
const MESSAGE_SIZE = 'thread_seq, (octet_length(content) + octet_length(metadata::text))::int8 AS bytes';

/** `PgMessages.insert`'s statement (its comment says what it does), one constant string: its statement name is derived once. */
const INSERT_MESSAGE = `WITH bumped AS (
         INSERT INTO threads AS t (user_id, id, last_seq, created_at, updated_at) VALUES ($1, $2, 1, ${SERVER_NOW}, ${SERVER_NOW})
         ON CONFLICT (user_id, id) DO UPDATE SET last_seq = t.last_seq + 1, updated_at = GREATEST(t.updated_at, ${SERVER_NOW})
         RETURNING last_seq, updated_at)
       INSERT INTO messages (id, user_id, thread_id, thread_seq, role, content, metadata, tool_call_id, status, created_at)
         SELECT $3, $1, $2, bumped.last_seq, $4, $5, $6::jsonb, $7, $8, bumped.updated_at FROM bumped
         RETURNING thread_seq, created_at`;

export class PgMessages implements MessagesRepo {
  /** `inserted`: told of each message this repository inserts (the store sends it to listeners once the unit commits). */
  constructor(
    private readonly q: Query,
    private readonly lookup?: CallLookup,
    private readonly inserted?: (m: CommittedMessage) => void,
  ) {}

  async insert(m: NewMessage, opts: { last?: boolean } = {}): Promise<MessageRow> {
    // One statement. Creating-or-bumping the thread row locks it until this
    // unit commits: two units writing one thread commit in the order of their
    // sequence numbers. The message's time is read under that lock (the DO
    // UPDATE runs once the lock is ours), from the server's clock and never
    // below the thread's last one: created_at never decreases along the
    // thread's order, whichever daemon wrote it. A second tool message for
    // the call fails the statement (unique `messages_tool_call`), bump
    // included: the thread stays gapless. Listeners hear of it after the
    // unit commits (`inserted`; notifier.ts says why not inside it).
    const id = newRowId('msg_');
    const text = INSERT_MESSAGE;
    const values = [m.userId, m.threadId, id, m.role, m.content, m.metadataJson, m.toolCallId ?? null, m.status ?? null];
    type Assigned = { thread_seq: number; created_at: string };
    // As the last statement it carries the unit's held writes (it reads none of their tables); else it is one more write in the transaction.
    const [row] = await (opts.last && this.q.last ? this.q.last<Assigned>(text, values, ['threads', 'messages']) : this.q<Assigned>(text, values));
    this.inserted?.({ userId: m.userId, threadId: m.threadId, messageId: id, seq: row!.thread_seq });
    return {
      id,
      user_id: m.userId,
      thread_id: m.threadId,
      thread_seq: row!.thread_seq,
      role: m.role,
      content: m.content,
      metadata: m.metadataJson,
      tool_call_id: m.toolCallId ?? null,
      status: m.status ?? null,
      created_at: row!.created_at,
    };
  }

  async getToolMessage(userId: string, threadId: string, toolCallId: string): Promise<MessageRow | undefined> {
    if (this.lookup) return this.lookup.read(this.q, userId, threadId, toolCallId);
    return (
      await this.q<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE user_id = $1 AND thread_id = $2 AND tool_call_id = $3`, [
        userId,
        threadId,
        toolCallId,
      ])
    )[0];
  }

  async toolMessages(userId: string, after: readonly [string, string] | undefined, limit: number): Promise<MessageRow[]> {
    if (!after) {
      return this.q<MessageRow>(
        `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE user_id = $1 AND tool_call_id IS NOT NULL ORDER BY created_at DESC, id DESC LIMIT $2`,
        [userId, limit],
      );
    }
    return this.q<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE user_id = $1 AND tool_call_id IS NOT NULL AND (created_at, id) < ($2, $3)
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [userId, after[0], after[1], limit],
    );
  }

  async page(
    userId: string,
    threadId: string,
    before: string | undefined,
    limit: number,
    opts: { withMetadata?: boolean; maxBytes?: number } = {},
  ): Promise<MessagePage> {
    let beforeSeq = Number.MAX_SAFE_INTEGER;
    if (before !== undefined) {
      const seq = await this.seqOf(userId, threadId, before);
      if (seq === undefined) return { rows: [], nextBefore: null };
      beforeSeq = seq;
    }
    const columns = opts.withMetadata === false ? MESSAGE_COLUMNS_NO_METADATA : MESSAGE_COLUMNS;
    if (opts.maxBytes === undefined) {
      const rows = await this.q<MessageRow>(
        `SELECT ${columns} FROM messages
          WHERE user_id = $1 AND thread_id = $2 AND thread_seq < $3 ORDER BY thread_seq DESC LIMIT $4`,
        [userId, threadId, beforeSeq, limit + 1],
      );
      const hasMore = rows.length > limit;
      const page = rows.slice(0, limit).reverse();
      return { rows: page, nextBefore: hasMore && page.length > 0 ? page[0]!.id : null };
    }
    const sizes = await this.q<RowSize>(
      `SELECT ${MESSAGE_SIZE} FROM messages WHERE user_id = $1 AND thread_id = $2 AND thread_seq < $3 ORDER BY thread_seq DESC LIMIT $4`,
      [userId, threadId, beforeSeq, limit + 1],
    );
    const fit = rowsWithin(sizes.slice(0, limit), opts.maxBytes);
    const hasMore = sizes.length > fit.count;
    const rows =
      fit.count === 0
        ? []
        : fit.cut
          ? [await this.readCut(userId, threadId, sizes[0]!.thread_seq, opts.maxBytes)]
          : await this.q<MessageRow>(
              `SELECT ${columns} FROM messages
                WHERE user_id = $1 AND thread_id = $2 AND thread_seq < $3 AND thread_seq >= $4 ORDER BY thread_seq DESC`,
              [userId, threadId, beforeSeq, sizes[fit.count - 1]!.thread_seq],
            );
    const page = rows.reverse();
    return { rows: page, nextBefore: hasMore && page.length > 0 ? page[0]!.id : null };
  }

  private async readCut(userId: string, threadId: string, seq: number, maxBytes: number): Promise<MessageRow> {
    const [r] = await this.q<MessageRow & { bytes: number }>(
      `SELECT ${MESSAGE_COLUMNS_CUT} FROM messages WHERE user_id = $1 AND thread_id = $2 AND thread_seq = $3`,
      [userId, threadId, seq, cutChars(maxBytes)],
    );
    const { bytes, ...row } = r!;
    return { ...row, content: cutContent(row.content, Number(bytes)), cut: true };
  }

  async metadataOf(userId: string, threadId: string, ids: readonly string[]): Promise<Map<string, string>> {
    const rows = await this.q<{ id: string; metadata: string }>(
      'SELECT id, metadata::text AS metadata FROM messages WHERE user_id = $1 AND thread_id = $2 AND id = ANY($3::text[])',
      [userId, threadId, [...ids]],
    );
    return new Map(rows.map((r) => [r.id, r.metadata]));
  }

  async messagesAfter(userId: string, threadId: string, afterSeq: number, limit: number, maxBytes?: number): Promise<MessageRow[]> {
    if (maxBytes === undefined) {
      return this.q<MessageRow>(
        `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE user_id = $1 AND thread_id = $2 AND thread_seq > $3
          ORDER BY thread_seq LIMIT $4`,
        [userId, threadId, afterSeq, limit],
      );
    }
    const sizes = await this.q<RowSize>(
      `SELECT ${MESSAGE_SIZE} FROM messages WHERE user_id = $1 AND thread_id = $2 AND thread_seq > $3 ORDER BY thread_seq LIMIT $4`,
      [userId, threadId, afterSeq, limit],
    );
    const fit = rowsWithin(sizes, maxBytes);
    if (fit.count === 0) return [];
    if (fit.cut) return [await this.readCut(userId, threadId, sizes[0]!.thread_seq, maxBytes)];
    return this.q<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE user_id = $1 AND thread_id = $2 AND thread_seq > $3 AND thread_seq <= $4
        ORDER BY thread_seq`,
      [userId, threadId, afterSeq, sizes[fit.count - 1]!.thread_seq],
    );
  }

  async seqOf(userId: string, threadId: string, messageId: string): Promise<number | undefined> {
    return (
      await this.q<{ thread_seq: number }>('SELECT thread_seq FROM messages WHERE id = $1 AND user_id = $2 AND thread_id = $3', [
        messageId,
        userId,
        threadId,
      ])
    )[0]?.thread_seq;
  }
}

/** Every message of a thread after a sequence number (any role), oldest first: what the fan-out rebuilds events from. */
export async function messagesAfter(q: Query, userId: string, threadId: string, afterSeq: number, upToSeq: number): Promise<MessageRow[]> {
  return q<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE user_id = $1 AND thread_id = $2 AND thread_seq > $3 AND thread_seq <= $4
      ORDER BY thread_seq`,
    [userId, threadId, afterSeq, upToSeq],
  );
}

/**
 * A call's two lookups in one round trip: a unit asking for a call's tool
 * message (has it been answered?) also gets its record (has it run?), which
 * the core asks for next. The record is kept for that one next question,
 * and forgotten when the unit records a call: READ COMMITTED reads each
 * statement's own snapshot, so an answer read a statement earlier is one
 * the later read could have given.
 */
export class CallLookup {
  private kept: { key: string; record: ToolCallRecord | undefined } | undefined;

  async read(q: Query, userId: string, threadId: string, toolCallId: string): Promise<MessageRow | undefined> {
    const [row] = await q<MessageRow & { [K in keyof ToolCallRecord as `c_${K}`]: ToolCallRecord[K] | null }>(
      `SELECT m.id, m.user_id, m.thread_id, m.thread_seq, m.role, m.content, m.metadata::text AS metadata, m.tool_call_id, m.status, m.created_at,
              c.user_id AS c_user_id, c.thread_id AS c_thread_id, c.tool_call_id AS c_tool_call_id, c.action AS c_action, c.args AS c_args,
              c.args_sha256 AS c_args_sha256, c.outcome AS c_outcome, c.exit_code AS c_exit_code, c.created_at AS c_created_at
         FROM (SELECT $1::text AS user_id, $2::text AS thread_id, $3::text AS tool_call_id) k
         LEFT JOIN messages m ON m.user_id = k.user_id AND m.thread_id = k.thread_id AND m.tool_call_id = k.tool_call_id
         LEFT JOIN tool_calls c ON c.user_id = k.user_id AND c.thread_id = k.thread_id AND c.tool_call_id = k.tool_call_id`,
      [userId, threadId, toolCallId],
      ['messages', 'tool_calls'],
    );
    const r = row!;
    const record: ToolCallRecord | undefined =
      r.c_tool_call_id === null
        ? undefined
        : {
            user_id: r.c_user_id!,
            thread_id: r.c_thread_id!,
            tool_call_id: r.c_tool_call_id,
            action: r.c_action!,
            args: r.c_args!,
            args_sha256: r.c_args_sha256!,
            outcome: r.c_outcome!,
            exit_code: r.c_exit_code!,
            created_at: r.c_created_at!,
          };
    this.kept = { key: JSON.stringify([userId, threadId, toolCallId]), record };
    if (r.id === null) return undefined;
    return {
      id: r.id,
      user_id: r.user_id,
      thread_id: r.thread_id,
      thread_seq: r.thread_seq,
      role: r.role,
      content: r.content,
      metadata: r.metadata,
      tool_call_id: r.tool_call_id,
      status: r.status,
      created_at: r.created_at,
    };
  }

  /** The record read with the tool message, once: `{ record }` when this is the call asked about just before. */
  take(userId: string, threadId: string, toolCallId: string): { record: ToolCallRecord | undefined } | undefined {
    const kept = this.kept;
    this.kept = undefined;
    return kept && kept.key === JSON.stringify([userId, threadId, toolCallId]) ? { record: kept.record } : undefined;
  }

  /** The call is taken as never stored (`Tx.assumeNewCall`): the next `take` of it answers "no record" without a read. */
  assumeNone(userId: string, threadId: string, toolCallId: string): void {
    this.kept = { key: JSON.stringify([userId, threadId, toolCallId]), record: undefined };
  }

  forget(): void {
    this.kept = undefined;
  }
}

/** The advisory-lock key of one call, the same SQL expression on both sides (holder and recovery). */
export const CALL_LOCK_KEY = (user: string, thread: string, call: string): string =>
  `hashtextextended(${user} || chr(31) || ${thread} || chr(31) || ${call}, 0)`;

export class PgToolCalls implements ToolCallsRepo {
  constructor(
    private readonly q: Query,
    private readonly lookup?: CallLookup,
  ) {}

  async get(userId: string, threadId: string, toolCallId: string): Promise<ToolCallRecord | undefined> {
    const known = this.lookup?.take(userId, threadId, toolCallId);
    if (known) return known.record;
    return (
      await this.q<ToolCallRecord>(
        'SELECT * FROM tool_calls WHERE user_id = $1 AND thread_id = $2 AND tool_call_id = $3',
        [userId, threadId, toolCallId],
        ['tool_calls'],
      )
    )[0];
  }

  async record(r: Omit<ToolCallRecord, 'created_at'>): Promise<void> {
    this.lookup?.forget();
    // Held back in a transaction. A racing unit holding the same key makes the
    // insert wait for it; once it committed, the insert fails (unique
    // `tool_calls_pkey`: StoreConflictError) and so does this unit, whole.
    await write(this.q, {
      text: `INSERT INTO tool_calls (user_id, thread_id, tool_call_id, action, args, args_sha256, outcome, exit_code, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      values: [r.user_id, r.thread_id, r.tool_call_id, r.action, r.args, r.args_sha256, r.outcome, r.exit_code, nowIso()],
      writes: ['tool_calls'],
    });
  }

  /**
   * Calls without their tool message — except those a live daemon is still
   * finishing: it holds the call's advisory lock (`PgStore.holdCall`) until
   * its tool message commits, and the lock dies with its connection.
   */
  async withoutMessage(): Promise<ToolCallRecord[]> {
    return this.q<ToolCallRecord>(
      `SELECT c.* FROM tool_calls c
        WHERE NOT EXISTS (SELECT 1 FROM messages m
                           WHERE m.user_id = c.user_id AND m.thread_id = c.thread_id AND m.tool_call_id = c.tool_call_id)
          AND pg_try_advisory_xact_lock(${CALL_LOCK_KEY('c.user_id', 'c.thread_id', 'c.tool_call_id')})
        ORDER BY c.created_at`,
    );
  }
}

export class PgCredentialAudit implements CredentialAuditRepo {
  constructor(private readonly q: Query) {}

  async record(c: Parameters<CredentialAuditRepo['record']>[0]): Promise<void> {
    await write(this.q, {
      text: `INSERT INTO credential_audit (jti, subject, source, job_id, actions, thread_id, tool_call_id, issued_at, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      values: [c.jti, c.subject, c.source, c.jobId, JSON.stringify(c.actions), c.threadId, c.toolCallId, c.issuedAt, c.expiresAt],
      writes: ['credential_audit'],
    });
  }
}

export class PgCredentialKeys implements CredentialKeysRepo {
  constructor(private readonly q: Query) {}

  async record(kid: string, publicJwk: Record<string, unknown>): Promise<void> {
    if ('d' in publicJwk) throw new Error('only a public key may be recorded');
    const now = nowIso();
    await this.q(
      `INSERT INTO credential_keys (kid, public_jwk, recorded_at, last_used_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (kid) DO UPDATE SET last_used_at = excluded.last_used_at`,
      [kid, JSON.stringify(publicJwk), now, now],
    );
  }

  async list(): Promise<RecordedKey[]> {
    const rows = await this.q<{ kid: string; public_jwk: string }>('SELECT kid, public_jwk FROM credential_keys ORDER BY last_used_at DESC');
    return rows.map((r) => ({ kid: r.kid, publicJwk: JSON.parse(r.public_jwk) as Record<string, unknown> }));
  }
}

export class PgAutomationJobs implements AutomationJobsRepo {
  constructor(private readonly q: Query) {}

  async create(job: Omit<AutomationJob, 'id'>): Promise<AutomationJob> {
    const id = newRowId('job_');
    await this.q(
      'INSERT INTO automation_jobs (id, owner_id, enabled_skills, allowed_actions, created_at, quotas, approval) VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6::jsonb, $7::jsonb)',
      [
        id,
        job.ownerId,
        JSON.stringify(job.enabledSkills),
        JSON.stringify(job.allowedActions),
        nowIso(),
        JSON.stringify(job.quotas ?? {}),
        job.approval ? JSON.stringify(job.approval) : null,
      ],
    );
    return { id, ...job };
  }

  async get(id: string): Promise<AutomationJob | undefined> {
    const row = (
      await this.q<{
        id: string;
        owner_id: string;
        enabled_skills: string[];
        allowed_actions: string[];
        quotas: Record<string, QuotaLimitsRow>;
        approval: AutomationJob['approval'];
      }>('SELECT id, owner_id, enabled_skills, allowed_actions, quotas, approval FROM automation_jobs WHERE id = $1', [id])
    )[0];
    if (!row) return undefined;
    const quotas = Object.keys(row.quotas).length > 0 ? { quotas: row.quotas } : {};
    return { id: row.id, ownerId: row.owner_id, enabledSkills: row.enabled_skills, allowedActions: row.allowed_actions, ...quotas, approval: row.approval };
  }
}

const EVENT_COLUMNS = 'e.id, e.owner_id, e.title, e.start_at, e.end_at, e.location, e.description, e.created_at, e.updated_at';
/** The scope rule, written once: a user sees the events they own and those whose invite they accepted. `$1` is the user. */
const VISIBLE_TO = `(e.owner_id = $1 OR EXISTS (
  SELECT 1 FROM invites i WHERE i.event_id = e.id AND i.invitee_id = $1 AND i.status = 'accepted'))`;
/** What the event reads look at (unit.ts: they need no held write of other tables sent first). */
const EVENT_READS = ['events', 'invites'];

export class PgEvents implements EventsRepo {
  constructor(private readonly q: Query) {}

  async create(ownerId: string, f: EventFields): Promise<Event> {
    // The row is all known here (id, times): held back in a transaction, and
    // returned as RETURNING would (the columns of EVENT_COLUMNS, in order).
    const now = nowIso();
    const event: Event = {
      id: newRowId('evt_'),
      owner_id: ownerId,
      title: f.title,
      start_at: f.start_at,
      end_at: f.end_at,
      location: f.location ?? null,
      description: f.description ?? null,
      created_at: now,
      updated_at: now,
    };
    const startMs = Date.parse(f.start_at);
    const endMs = Date.parse(f.end_at);
    const statement = {
      text: `INSERT INTO events (id, owner_id, title, start_at, end_at, start_ms, end_ms, location, description, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
      values: [event.id, ownerId, f.title, f.start_at, f.end_at, startMs, endMs, event.location, event.description, now],
      writes: ['events'],
    };
    // A row the table's check refuses (end after start) fails here, where the caller expects it, never later.
    if (endMs > startMs) await write(this.q, statement);
    else await this.q(statement.text, statement.values);
    return event;
  }

  async getVisible(userId: string, eventId: string): Promise<Event | undefined> {
    return (await this.q<Event>(`SELECT ${EVENT_COLUMNS} FROM events e WHERE e.id = $2 AND ${VISIBLE_TO}`, [userId, eventId], EVENT_READS))[0];
  }

  async getOwned(ownerId: string, eventId: string): Promise<Event | undefined> {
    return (await this.q<Event>(`SELECT ${EVENT_COLUMNS} FROM events e WHERE e.id = $1 AND e.owner_id = $2`, [eventId, ownerId], EVENT_READS))[0];
  }

  async listVisible(userId: string, fromMs: number, toMs: number, after: EventPosition | null, limit: number): Promise<Event[]> {
    if (after === null) {
      return this.q<Event>(
        `SELECT ${EVENT_COLUMNS} FROM events e WHERE e.start_ms < $3 AND e.end_ms > $2 AND ${VISIBLE_TO}
          ORDER BY e.start_ms, e.id COLLATE "C" LIMIT $4`,
        [userId, fromMs, toMs, limit],
        EVENT_READS,
      );
    }
    return this.q<Event>(
      `SELECT ${EVENT_COLUMNS} FROM events e WHERE e.start_ms < $3 AND e.end_ms > $2 AND ${VISIBLE_TO}
          AND (e.start_ms > $5 OR (e.start_ms = $5 AND e.id COLLATE "C" > $6))
        ORDER BY e.start_ms, e.id COLLATE "C" LIMIT $4`,
      [userId, fromMs, toMs, limit, after.startMs, after.id],
      EVENT_READS,
    );
  }

  async updateOwned(ownerId: string, eventId: string, f: EventFields, seen?: Event): Promise<Event | undefined> {
    const now = nowIso();
    const startMs = Date.parse(f.start_at);
    const endMs = Date.parse(f.end_at);
    const text = `UPDATE events AS e SET title = $1, start_at = $2, end_at = $3, start_ms = $4, end_ms = $5, location = $6, description = $7, updated_at = $8
          WHERE e.id = $9 AND e.owner_id = $10`;
    const values = [f.title, f.start_at, f.end_at, startMs, endMs, f.location ?? null, f.description ?? null, now, eventId, ownerId];
    // Seen owned by this unit: the answer is the seen row with every field
    // set (what RETURNING gives, in its column order), so the write is held
    // back. The read before it ran alone, as it did when the write was sent
    // at once: a concurrent change in between meets the same write.
    if (seen && seen.id === eventId && seen.owner_id === ownerId && this.q.hold && endMs > startMs) {
      await this.q.hold({ text, values, writes: ['events'], row: JSON.stringify(['events', eventId]) });
      return { ...seen, title: f.title, start_at: f.start_at, end_at: f.end_at, location: f.location ?? null, description: f.description ?? null, updated_at: now };
    }
    return (await this.q<Event>(`${text} RETURNING ${EVENT_COLUMNS}`, values))[0];
  }

  async deleteOwned(ownerId: string, eventId: string, seen?: Event): Promise<boolean> {
    const text = 'DELETE FROM events WHERE id = $1 AND owner_id = $2';
    // Seen owned by this unit: held back, as `updateOwned`.
    if (seen && seen.id === eventId && seen.owner_id === ownerId && this.q.hold) {
      await this.q.hold({ text, values: [eventId, ownerId], writes: ['events', 'invites'], row: JSON.stringify(['events', eventId]) });
      return true;
    }
    return (await this.q(`${text} RETURNING 1`, [eventId, ownerId])).length === 1;
  }
}

const INVITE_COLUMNS = 'id AS invite_id, event_id, inviter_id, invitee_id, status';

export class PgInvites implements InvitesRepo {
  constructor(private readonly q: Query) {}

  async upsert(eventId: string, inviterId: string, inviteeId: string): Promise<InviteRow> {
    const now = nowIso();
    // The unique (event_id, invitee_id) makes two daemons sharing one event to one user agree on one invite.
    const rows = await this.q<InviteRow>(
      `INSERT INTO invites AS i (id, event_id, inviter_id, invitee_id, status, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'pending', $5, $5)
       ON CONFLICT (event_id, invitee_id) DO UPDATE SET
         status = CASE WHEN i.status = 'rejected' THEN 'pending' ELSE i.status END,
         updated_at = excluded.updated_at
       RETURNING ${INVITE_COLUMNS}`,
      [newRowId('inv_'), eventId, inviterId, inviteeId, now],
    );
    return rows[0]!;
  }

  async getFor(inviteeId: string, inviteId: string): Promise<InviteRow | undefined> {
    return (await this.q<InviteRow>(`SELECT ${INVITE_COLUMNS} FROM invites WHERE id = $1 AND invitee_id = $2`, [inviteId, inviteeId], ['invites']))[0];
  }

  async setStatus(inviteeId: string, inviteId: string, status: InviteRow['status'], seen?: InviteRow): Promise<InviteRow | undefined> {
    const text = 'UPDATE invites SET status = $1, updated_at = $2 WHERE id = $3 AND invitee_id = $4';
    const values = [status, nowIso(), inviteId, inviteeId];
    // Seen by this unit: the answer is the seen row with its new status, so the write is held back (as `PgEvents.updateOwned`).
    if (seen && seen.invite_id === inviteId && seen.invitee_id === inviteeId && this.q.hold) {
      await this.q.hold({ text, values, writes: ['invites'], row: JSON.stringify(['invites', inviteId]) });
      return { ...seen, status };
    }
    return (await this.q<InviteRow>(`${text} RETURNING ${INVITE_COLUMNS}`, values))[0];
  }
}

export class PgMemories implements MemoriesRepo {
  constructor(private readonly q: Query) {}

  async upsert(userId: string, key: string, content: string): Promise<Memory> {
    const now = nowIso();
    // Its answer is all known here: held back in a transaction.
    await write(this.q, {
      text: `INSERT INTO memories (user_id, key, content, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
             ON CONFLICT (user_id, key) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at`,
      values: [userId, key, content, now],
      writes: ['memories'],
      row: JSON.stringify(['memories', userId, key]),
    });
    return { key, content, updated_at: now };
  }

  async forget(userId: string, key: string): Promise<boolean> {
    return (await this.q('DELETE FROM memories WHERE user_id = $1 AND key = $2 RETURNING 1', [userId, key])).length === 1;
  }

  async read(userId: string, key: string): Promise<Memory[]> {
    return this.q<Memory>('SELECT key, content, updated_at FROM memories WHERE user_id = $1 AND key = $2', [userId, key], ['memories']);
  }

  async page(userId: string, after: string | null, limit: number): Promise<Memory[]> {
    if (after === null) return this.q<Memory>('SELECT key, content, updated_at FROM memories WHERE user_id = $1 ORDER BY key COLLATE "C" LIMIT $2', [userId, limit], ['memories']);
    return this.q<Memory>(
      'SELECT key, content, updated_at FROM memories WHERE user_id = $1 AND key COLLATE "C" > $2 ORDER BY key COLLATE "C" LIMIT $3',
      [userId, after, limit],
      ['memories'],
    );
  }
}

export class PgContacts implements ContactsRepo {
  constructor(private readonly q: Query) {}

  async list(userId: string, query: string | undefined, limit: number): Promise<Contact[]> {
    const pattern = query === undefined ? null : `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    // ILIKE: SQLite's LIKE ignores ASCII case; the pattern is bound, its wildcards escaped.
    return this.q<Contact>(
      `SELECT u.id AS user_id, u.name, u.phone FROM users u
        WHERE u.id <> $1 AND u.id IN (
              SELECT invitee_id FROM invites WHERE inviter_id = $1
              UNION SELECT inviter_id FROM invites WHERE invitee_id = $1)
          AND ($2::text IS NULL OR u.name ILIKE $2 ESCAPE '\\' OR u.phone ILIKE $2 ESCAPE '\\')
        ORDER BY coalesce(u.name, u.id) COLLATE "C", u.id COLLATE "C" LIMIT $3`,
      [userId, pattern, limit],
      [USERS_REACHED, 'invites'],
    );
  }
}
