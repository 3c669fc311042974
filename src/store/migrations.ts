/**
 * Versioned schema migrations. Each entry moves the database from version
 * `index` to `index + 1`; `PRAGMA user_version` records where a file stands.
 * Append only: a migration that has shipped is never edited.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: the walking skeleton's tables.
  `
  CREATE TABLE users (
    id          TEXT PRIMARY KEY,
    name        TEXT,
    phone       TEXT,
    role        TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
  );
  CREATE UNIQUE INDEX users_phone ON users(phone) WHERE phone IS NOT NULL;

  CREATE TABLE threads (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users(id),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
  );
  CREATE INDEX threads_user ON threads(user_id, updated_at);

  -- content is the text the model saw (never JSON-typed); metadata is JSON text.
  CREATE TABLE messages (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    id            TEXT NOT NULL UNIQUE,
    thread_id     TEXT NOT NULL REFERENCES threads(id),
    role          TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
    content       TEXT NOT NULL CHECK (typeof(content) = 'text'),
    metadata      TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    tool_call_id  TEXT,
    status        TEXT,
    created_at    TEXT NOT NULL
  );
  CREATE INDEX messages_thread ON messages(thread_id, seq);
  -- One tool message per call: the idempotency key of contract section 3.
  CREATE UNIQUE INDEX messages_tool_call ON messages(thread_id, tool_call_id) WHERE tool_call_id IS NOT NULL;

  CREATE TABLE events (
    id           TEXT PRIMARY KEY,
    owner_id     TEXT NOT NULL REFERENCES users(id),
    title        TEXT NOT NULL,
    start_at     TEXT NOT NULL,
    end_at       TEXT NOT NULL,
    start_ms     INTEGER NOT NULL,
    end_ms       INTEGER NOT NULL CHECK (end_ms > start_ms),
    location     TEXT,
    description  TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
  );
  CREATE INDEX events_owner_time ON events(owner_id, start_ms);

  CREATE TABLE invites (
    id          TEXT PRIMARY KEY,
    event_id    TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    inviter_id  TEXT NOT NULL REFERENCES users(id),
    invitee_id  TEXT NOT NULL REFERENCES users(id),
    status      TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'rejected')),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (event_id, invitee_id)
  );
  CREATE INDEX invites_invitee ON invites(invitee_id, status);

  CREATE TABLE memories (
    user_id     TEXT NOT NULL REFERENCES users(id),
    key         TEXT NOT NULL,
    content     TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (user_id, key)
  );

  -- The record that a tool call ran, written by project-cli in the same
  -- transaction as the action's own writes (exactly-once across processes).
  CREATE TABLE tool_calls (
    thread_id     TEXT NOT NULL,
    tool_call_id  TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    action        TEXT NOT NULL,
    args          TEXT NOT NULL CHECK (json_valid(args)),
    args_sha256   TEXT NOT NULL,
    outcome       TEXT NOT NULL CHECK (json_valid(outcome)),
    exit_code     INTEGER NOT NULL,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (thread_id, tool_call_id)
  );

  -- One row per controlled credential issued. Never the token itself.
  CREATE TABLE credential_audit (
    jti         TEXT PRIMARY KEY,
    subject     TEXT NOT NULL,
    source      TEXT NOT NULL CHECK (source IN ('session', 'automation')),
    job_id      TEXT,
    actions     TEXT NOT NULL,
    thread_id   TEXT,
    tool_call_id TEXT,
    issued_at   TEXT NOT NULL,
    expires_at  TEXT NOT NULL
  );
  `,
  // 2: automation jobs — a trusted backend runs an agent for a user without their bearer token.
  `
  CREATE TABLE automation_jobs (
    id               TEXT PRIMARY KEY,
    owner_id         TEXT NOT NULL REFERENCES users(id),
    enabled_skills   TEXT NOT NULL CHECK (json_valid(enabled_skills)),
    allowed_actions  TEXT NOT NULL CHECK (json_valid(allowed_actions)),
    created_at       TEXT NOT NULL
  );
  `,
  // 3: threads are a per-user namespace (user_id, thread_id) — storage, idempotency keys, ordering.
  //    Messages carry their thread's user and a per-thread sequence number (thread_seq: 1, 2, 3…,
  //    unique per thread, assigned at insert from threads.last_seq). Existing data keeps its ids:
  //    each old thread had exactly one owner, so (owner, id) names it; thread_seq follows seq.
  `
  ALTER TABLE messages RENAME TO messages_v2;
  DROP INDEX messages_thread;
  DROP INDEX messages_tool_call;
  ALTER TABLE threads RENAME TO threads_v2;
  DROP INDEX threads_user;

  CREATE TABLE threads (
    user_id     TEXT NOT NULL REFERENCES users(id),
    id          TEXT NOT NULL,
    -- the thread_seq of its newest message (0: none yet); message_count, since messages are never deleted.
    last_seq    INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (user_id, id)
  );
  CREATE INDEX threads_user ON threads(user_id, updated_at);

  CREATE TABLE messages (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    id            TEXT NOT NULL UNIQUE,
    user_id       TEXT NOT NULL,
    thread_id     TEXT NOT NULL,
    thread_seq    INTEGER NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
    content       TEXT NOT NULL CHECK (typeof(content) = 'text'),
    metadata      TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    tool_call_id  TEXT,
    status        TEXT,
    created_at    TEXT NOT NULL,
    FOREIGN KEY (user_id, thread_id) REFERENCES threads(user_id, id),
    UNIQUE (user_id, thread_id, thread_seq)
  );
  -- One tool message per call: the idempotency key of contract section 3, per user.
  CREATE UNIQUE INDEX messages_tool_call ON messages(user_id, thread_id, tool_call_id) WHERE tool_call_id IS NOT NULL;

  INSERT INTO threads (user_id, id, last_seq, created_at, updated_at)
    SELECT t.user_id, t.id, (SELECT count(*) FROM messages_v2 m WHERE m.thread_id = t.id), t.created_at, t.updated_at
      FROM threads_v2 t;
  INSERT INTO messages (seq, id, user_id, thread_id, thread_seq, role, content, metadata, tool_call_id, status, created_at)
    SELECT m.seq, m.id, t.user_id, m.thread_id, row_number() OVER (PARTITION BY m.thread_id ORDER BY m.seq),
           m.role, m.content, m.metadata, m.tool_call_id, m.status, m.created_at
      FROM messages_v2 m JOIN threads_v2 t ON t.id = m.thread_id;
  DROP TABLE messages_v2;
  DROP TABLE threads_v2;

  ALTER TABLE tool_calls RENAME TO tool_calls_v2;
  CREATE TABLE tool_calls (
    user_id       TEXT NOT NULL,
    thread_id     TEXT NOT NULL,
    tool_call_id  TEXT NOT NULL,
    action        TEXT NOT NULL,
    args          TEXT NOT NULL CHECK (json_valid(args)),
    args_sha256   TEXT NOT NULL,
    outcome       TEXT NOT NULL CHECK (json_valid(outcome)),
    exit_code     INTEGER NOT NULL,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (user_id, thread_id, tool_call_id)
  );
  INSERT INTO tool_calls (user_id, thread_id, tool_call_id, action, args, args_sha256, outcome, exit_code, created_at)
    SELECT user_id, thread_id, tool_call_id, action, args, args_sha256, outcome, exit_code, created_at FROM tool_calls_v2;
  DROP TABLE tool_calls_v2;
  `,
  // 4: the public halves of the daemon's credential signing keys — what project-cli trusts (contract sections 6, 7).
  `
  CREATE TABLE credential_keys (
    kid          TEXT PRIMARY KEY,
    public_jwk   TEXT NOT NULL CHECK (json_valid(public_jwk)),
    recorded_at  TEXT NOT NULL,
    last_used_at TEXT NOT NULL
  );
  `,
  // 5: calls that are not done yet, visible to other daemons (contract section 16).
  `
  CREATE TABLE calls (
    user_id       TEXT NOT NULL,
    thread_id     TEXT NOT NULL,
    tool_call_id  TEXT NOT NULL,
    action        TEXT NOT NULL,
    args_sha256   TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('awaiting_approval', 'running')),
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (user_id, thread_id, tool_call_id)
  );
  `,
  // 6: per-user call quotas (contract section 20): the counters, and an automation job's own quotas.
  `
  CREATE TABLE quota_counts (
    user_id       TEXT NOT NULL,
    scope         TEXT NOT NULL,
    period        TEXT NOT NULL CHECK (period IN ('minute', 'hour', 'day')),
    window_start  INTEGER NOT NULL,
    used          INTEGER NOT NULL,
    allowed       INTEGER NOT NULL,
    PRIMARY KEY (user_id, scope, period),
    CHECK (used <= allowed)
  );
  ALTER TABLE automation_jobs ADD COLUMN quotas TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(quotas));
  `,
  // 7: approval bound to the exact call (contract section 17): a pending call's args, expiry and runner; a
  // job's own approval policy; the decisions' audit.
  `
  ALTER TABLE calls ADD COLUMN args TEXT CHECK (json_valid(args));
  ALTER TABLE calls ADD COLUMN expires_at TEXT;
  ALTER TABLE calls ADD COLUMN source TEXT;
  ALTER TABLE calls ADD COLUMN job_id TEXT;
  ALTER TABLE automation_jobs ADD COLUMN approval TEXT CHECK (json_valid(approval));
  CREATE TABLE approval_audit (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id       TEXT NOT NULL,
    thread_id     TEXT NOT NULL,
    tool_call_id  TEXT NOT NULL,
    args_sha256   TEXT NOT NULL,
    decision      TEXT NOT NULL CHECK (decision IN ('approve', 'deny', 'expire', 'cancel')),
    surface       TEXT NOT NULL,
    decided_at    TEXT NOT NULL
  );
  `,
  // 8: MCP HTTP sessions in the database, so every daemon behind a load balancer serves them (contract section 20).
  `
  CREATE TABLE mcp_sessions (
    id          TEXT,
    user_id     TEXT NOT NULL,
    agent       TEXT NOT NULL,
    client      TEXT NOT NULL CHECK (json_valid(client)),
    expires_ms  INTEGER NOT NULL,
    idle_ms     INTEGER NOT NULL,
    used_ms     INTEGER NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (id)
  );
  CREATE INDEX mcp_sessions_user ON mcp_sessions(user_id);
  `,
];
