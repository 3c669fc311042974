/**
 * The one declared schema: every table, column, key and index of the store,
 * in engine-neutral terms. Both engines' DDL is generated from it
 * (`schema-ddl.ts`): SQLite gets `TEXT` + `json_valid` checks, PostgreSQL
 * gets `text` + `jsonb` — the same tables and columns either way.
 *
 * This is the schema at `SCHEMA_VERSION`. A fresh PostgreSQL database is
 * created from it directly. SQLite files move through the append-only steps
 * of `migrations.ts` (they predate this declaration); a test migrates a file
 * through those steps and checks that it ends up exactly as declared here,
 * so the two cannot drift. A new schema change is made here AND appended as
 * a step (for SQLite, and in `PG_UPGRADES` for PostgreSQL, generated from
 * the same declared ops where it can be).
 */

/** Engine-neutral column types. */
export type ColumnType =
  /** Text; with `strictText` SQLite also refuses non-text values (it is dynamically typed). */
  | 'text'
  /** A 64-bit integer (milliseconds, counters). */
  | 'bigint'
  | 'integer'
  /** Structured data: JSON text checked with json_valid on SQLite, jsonb on PostgreSQL. */
  | 'json'
  /** JSON kept as the exact text written (arguments hashed byte for byte): TEXT + json_valid / text + a cast check. */
  | 'json_text'
  /** The table's own increasing row number (primary key). */
  | 'serial';

export interface Column {
  name: string;
  type: ColumnType;
  notNull?: boolean;
  /** A literal default valid in both dialects (e.g. `'{}'`). */
  default?: string;
  /** The column holds one of these values (a CHECK in both engines). */
  oneOf?: readonly string[];
  strictText?: boolean;
  unique?: boolean;
  references?: { table: string; column: string; onDelete?: 'CASCADE' };
}

export interface Table {
  name: string;
  columns: readonly Column[];
  primaryKey?: readonly string[];
  unique?: readonly (readonly string[])[];
  /** Composite foreign keys (single-column ones sit on the column). */
  foreignKeys?: readonly { columns: readonly string[]; table: string; refColumns: readonly string[] }[];
  /** Row checks written in the common subset of both dialects. */
  checks?: readonly string[];
}

export interface Index {
  name: string;
  table: string;
  columns: readonly string[];
  unique?: boolean;
  /** Partial index: only rows where these columns are not null. */
  whereNotNull?: readonly string[];
}

export interface Schema {
  tables: readonly Table[];
  indexes: readonly Index[];
}

const text = (name: string, extra: Partial<Column> = {}): Column => ({ name, type: 'text', ...extra });
const req = (name: string, extra: Partial<Column> = {}): Column => ({ name, type: 'text', notNull: true, ...extra });

export const SCHEMA: Schema = {
  tables: [
    {
      name: 'users',
      // Single-column text keys carry no NOT NULL of their own: the shipped SQLite steps never
      // declared it (PostgreSQL's PRIMARY KEY implies it; SQLite's does not).
      columns: [text('id'), text('name'), text('phone'), text('role'), req('created_at'), req('updated_at')],
      primaryKey: ['id'],
    },
    {
      // A per-user namespace (contract §3): the thread is (user_id, id).
      name: 'threads',
      columns: [
        req('user_id', { references: { table: 'users', column: 'id' } }),
        req('id'),
        // The thread_seq of its newest message (0: none yet) — also message_count, since
        // messages are never deleted. Bumping it row-locks the thread, so on PostgreSQL a
        // thread's messages commit in sequence order (the fan-out order).
        { name: 'last_seq', type: 'bigint', notNull: true, default: '0' },
        req('created_at'),
        req('updated_at'),
      ],
      primaryKey: ['user_id', 'id'],
    },
    {
      name: 'messages',
      columns: [
        { name: 'seq', type: 'serial' },
        req('id', { unique: true }),
        req('user_id'),
        req('thread_id'),
        // 1, 2, 3… per thread: the order every daemon delivers the thread's events in.
        { name: 'thread_seq', type: 'bigint', notNull: true },
        req('role', { oneOf: ['user', 'assistant', 'tool'] }),
        // The text the model saw: never JSON-typed (contract §5).
        req('content', { strictText: true }),
        { name: 'metadata', type: 'json', notNull: true, default: "'{}'" },
        text('tool_call_id'),
        text('status'),
        req('created_at'),
      ],
      foreignKeys: [{ columns: ['user_id', 'thread_id'], table: 'threads', refColumns: ['user_id', 'id'] }],
      unique: [['user_id', 'thread_id', 'thread_seq']],
    },
    {
      name: 'events',
      columns: [
        text('id'),
        req('owner_id', { references: { table: 'users', column: 'id' } }),
        req('title'),
        req('start_at'),
        req('end_at'),
        { name: 'start_ms', type: 'bigint', notNull: true },
        { name: 'end_ms', type: 'bigint', notNull: true },
        text('location'),
        text('description'),
        req('created_at'),
        req('updated_at'),
      ],
      primaryKey: ['id'],
      checks: ['end_ms > start_ms'],
    },
    {
      name: 'invites',
      columns: [
        text('id'),
        req('event_id', { references: { table: 'events', column: 'id', onDelete: 'CASCADE' } }),
        req('inviter_id', { references: { table: 'users', column: 'id' } }),
        req('invitee_id', { references: { table: 'users', column: 'id' } }),
        req('status', { oneOf: ['pending', 'accepted', 'rejected'] }),
        req('created_at'),
        req('updated_at'),
      ],
      primaryKey: ['id'],
      unique: [['event_id', 'invitee_id']],
    },
    {
      name: 'memories',
      columns: [req('user_id', { references: { table: 'users', column: 'id' } }), req('key'), req('content'), req('created_at'), req('updated_at')],
      primaryKey: ['user_id', 'key'],
    },
    {
      name: 'tool_calls',
      columns: [
        req('user_id'),
        req('thread_id'),
        req('tool_call_id'),
        req('action'),
        { name: 'args', type: 'json_text', notNull: true },
        req('args_sha256'),
        { name: 'outcome', type: 'json_text', notNull: true },
        { name: 'exit_code', type: 'integer', notNull: true },
        req('created_at'),
      ],
      // Idempotency across daemons: one record per (user, thread, tool_call_id).
      primaryKey: ['user_id', 'thread_id', 'tool_call_id'],
    },
    {
      name: 'credential_audit',
      columns: [
        text('jti'),
        req('subject'),
        req('source', { oneOf: ['session', 'automation'] }),
        text('job_id'),
        req('actions'),
        text('thread_id'),
        text('tool_call_id'),
        req('issued_at'),
        req('expires_at'),
      ],
      primaryKey: ['jti'],
    },
    {
      // The public halves of the daemon's signing keys: what project-cli trusts (contract §6).
      name: 'credential_keys',
      columns: [
        text('kid'),
        { name: 'public_jwk', type: 'json_text', notNull: true },
        req('recorded_at'),
        req('last_used_at'),
      ],
      primaryKey: ['kid'],
    },
    {
      name: 'automation_jobs',
      columns: [
        text('id'),
        req('owner_id', { references: { table: 'users', column: 'id' } }),
        { name: 'enabled_skills', type: 'json', notNull: true },
        { name: 'allowed_actions', type: 'json', notNull: true },
        req('created_at'),
        // `{"<pattern>": {per_minute?, per_hour?, per_day?}}` (contract §20), `{}` for none.
        { name: 'quotas', type: 'json', notNull: true, default: "'{}'" },
        // `{ask: [exact module.method], ttl_s}` (contract section 17); null: no action asks (version 7).
        { name: 'approval', type: 'json' },
      ],
      primaryKey: ['id'],
    },
    {
      // A call that is not done yet (contract §16), where another daemon can see it: PostgreSQL daemons
      // write a row when a call starts to run and delete it once its tool message (the `done` state) is
      // stored. A row whose daemon died is recognised by its call mark no longer being held.
      name: 'calls',
      columns: [
        req('user_id'),
        req('thread_id'),
        req('tool_call_id'),
        req('action'),
        req('args_sha256'),
        req('state', { oneOf: ['awaiting_approval', 'running'] }),
        req('created_at'),
        req('updated_at'),
        // Version 6, a call awaiting approval (contract section 17): its args as the model wrote them (what an
        // approval runs), when it expires, and who runs it (the credential's source and job).
        { name: 'args', type: 'json_text' },
        text('expires_at'),
        text('source'),
        text('job_id'),
      ],
      primaryKey: ['user_id', 'thread_id', 'tool_call_id'],
    },
    {
      // Per-user call quotas (contract §20): one row per (user, scope, period) holding the count of its
      // current fixed window. `scope` names the quota (`agent:<profile>:<pattern>`, `job:<id>:<pattern>`).
      // A call is counted by one upsert of every row it counts against; `used <= allowed` makes the
      // upsert fail whole when any window is full, so calls raced on any number of daemons pass exactly
      // `allowed` times: the row lock orders them, the check refuses the one past the limit.
      name: 'quota_counts',
      columns: [
        req('user_id'),
        req('scope'),
        req('period', { oneOf: ['minute', 'hour', 'day'] }),
        // The window's start, milliseconds since the epoch (UTC-aligned: a multiple of its length).
        { name: 'window_start', type: 'bigint', notNull: true },
        { name: 'used', type: 'integer', notNull: true },
        // The limit the last counted call saw: a reload that lowers it applies at the next call.
        { name: 'allowed', type: 'integer', notNull: true },
      ],
      primaryKey: ['user_id', 'scope', 'period'],
      checks: ['used <= allowed'],
    },
    {
      // Every decision on a call awaiting approval (contract section 17), beside the credential audit:
      // who decided, when, what, from which surface, on which args digest. Never a token or the args.
      name: 'approval_audit',
      columns: [
        { name: 'seq', type: 'serial' },
        req('user_id'),
        req('thread_id'),
        req('tool_call_id'),
        req('args_sha256'),
        req('decision', { oneOf: ['approve', 'deny', 'expire', 'cancel'] }),
        req('surface'),
        req('decided_at'),
      ],
    },
    {
      // An MCP 2025-11-25 HTTP session (contract §11, §20): its state lives here, not in one daemon's memory,
      // so any daemon behind a load balancer serves its requests. `client` is the client's `initialize`
      // params (checked for secrets), replayed to restore the session; the user's cap is counted here.
      name: 'mcp_sessions',
      columns: [
        text('id'),
        req('user_id'),
        req('agent'),
        { name: 'client', type: 'json_text', notNull: true },
        { name: 'expires_ms', type: 'bigint', notNull: true },
        { name: 'idle_ms', type: 'bigint', notNull: true },
        { name: 'used_ms', type: 'bigint', notNull: true },
        req('created_at'),
      ],
      primaryKey: ['id'],
    },
  ],
  indexes: [
    { name: 'users_phone', table: 'users', columns: ['phone'], unique: true, whereNotNull: ['phone'] },
    { name: 'threads_user', table: 'threads', columns: ['user_id', 'updated_at'] },
    // One tool message per call: the idempotency key of contract §3.
    { name: 'messages_tool_call', table: 'messages', columns: ['user_id', 'thread_id', 'tool_call_id'], unique: true, whereNotNull: ['tool_call_id'] },
    { name: 'events_owner_time', table: 'events', columns: ['owner_id', 'start_ms'] },
    { name: 'invites_invitee', table: 'invites', columns: ['invitee_id', 'status'] },
    { name: 'mcp_sessions_user', table: 'mcp_sessions', columns: ['user_id'] },
  ],
};

/** The version the declaration describes (the number of applied migration steps). */
export const SCHEMA_VERSION = 8;
