/**
 * The PostgreSQL engine against a real server (TOOLGATE_TEST_PG_URL): the
 * declared schema, open errors an operator can act on, the repositories'
 * cross-daemon guarantees (unique keys, per-thread order) and the
 * LISTEN/NOTIFY fan-out including a lost connection.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { DatabaseOpenError } from '../../../src/store/database.js';
import { SCHEMA, SCHEMA_VERSION } from '../../../src/store/schema.js';
import { openPgStore, type PgStore } from '../../../src/store/pg/pg-store.js';
import { describePgUrl } from '../../../src/store/pg/connect.js';
import { StoreConflictError, type MessageRow } from '../../../src/store/store.js';
import { STORED_ROW_CHECK } from '../../../src/store/stored-rows.js';
import { dropAllFreshDatabases, freshPgDatabase, needsPg, pgQuery, TEST_PG_URL, withDatabase } from '../../helpers/pg.js';
import { waitFor } from '../../helpers/wait-for.js';
import pg from 'pg';
import { PgThreadNotifier } from '../../../src/store/pg/notifier.js';
import { THREAD_EVENTS_CHANNEL } from '../../../src/store/pg/thread-feed.js';

after(dropAllFreshDatabases);

const silent = { log: () => {} };

async function freshStore(): Promise<{ store: PgStore; url: string }> {
  const db = await freshPgDatabase();
  return { store: await openPgStore(db.url, { log: silent }), url: db.url };
}

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const toolMessage = (userId: string, threadId: string, toolCallId: string, content = 'x') => ({
  userId,
  threadId,
  role: 'tool' as const,
  content,
  metadataJson: JSON.stringify({ tool_agent_output: { tool_call_id: toolCallId } }),
  toolCallId,
  status: 'success',
});

describe('PostgreSQL engine', needsPg, () => {
  test('a fresh database gets exactly the declared tables and columns, metadata as jsonb and content as text', async () => {
    const { store, url } = await freshStore();
    await store.close();
    const cols = await pgQuery<{ table_name: string; column_name: string; data_type: string }>(
      url,
      `SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'toolgate_schema'
        ORDER BY table_name, ordinal_position`,
    );
    const actual = new Map<string, string[]>();
    for (const c of cols) actual.set(c.table_name, [...(actual.get(c.table_name) ?? []), c.column_name]);
    const declared = new Map(SCHEMA.tables.map((t) => [t.name, t.columns.map((c) => c.name)]));
    assert.deepEqual(Object.fromEntries([...actual].sort()), Object.fromEntries([...declared].sort()));
    const type = (t: string, c: string) => cols.find((x) => x.table_name === t && x.column_name === c)?.data_type;
    assert.equal(type('messages', 'metadata'), 'jsonb');
    assert.equal(type('messages', 'content'), 'text');
    const [v] = await pgQuery<{ version: number }>(url, 'SELECT max(version) AS version FROM toolgate_schema');
    assert.equal(v!.version, SCHEMA_VERSION);
  });

  test('several daemons starting together on one empty database migrate it once', async () => {
    const db = await freshPgDatabase();
    const stores = await Promise.all([1, 2, 3, 4].map(() => openPgStore(db.url, { log: silent })));
    await Promise.all(stores.map((s) => s.close()));
    const rows = await pgQuery(db.url, 'SELECT version FROM toolgate_schema');
    assert.equal(rows.length, 1);
  });

  describe('open errors name the cause, never the password', () => {
    const password = new URL(TEST_PG_URL ?? 'postgres://x:y@h/d').password;
    const refused = async (url: string, pattern: RegExp) => {
      await assert.rejects(openPgStore(url), (err: Error) => {
        assert.ok(err instanceof DatabaseOpenError, `a DatabaseOpenError, got ${err.name}: ${err.message}`);
        assert.match(err.message, pattern);
        assert.ok(!err.message.includes(password), 'the password stays out of the message');
        return true;
      });
    };

    test('an unreachable server', async () => {
      const u = new URL(TEST_PG_URL!);
      u.port = String(await closedPort());
      await refused(u.toString(), /cannot reach the PostgreSQL server at 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
    });

    test('wrong credentials', async () => {
      const u = new URL(TEST_PG_URL!);
      u.password = 'not-the-password';
      await refused(u.toString(), /refused the credentials of user "toolgate"/);
    });

    test('a database that does not exist', async () => {
      await refused(withDatabase(TEST_PG_URL!, 'no_such_database_here'), /database "no_such_database_here" does not exist/);
    });

    test('a schema from a newer toolgate', async () => {
      const { store, url } = await freshStore();
      await store.close();
      await pgQuery(url, 'INSERT INTO toolgate_schema (version) VALUES ($1)', [SCHEMA_VERSION + 1]);
      await refused(url, new RegExp(`schema is at version ${SCHEMA_VERSION + 1}, newer than this toolgate knows \\(${SCHEMA_VERSION}\\)`));
    });

    test('URLs in logs lose their password', () => {
      assert.equal(describePgUrl('postgres://u:secret@h:5/d'), 'postgres://u:***@h:5/d');
    });
  });

  test('an upgrade walks the stored rows: a malformed one refuses it by name and the database stays at its version', async () => {
    const { store, url } = await freshStore();
    await store.transaction(async (tx) => {
      await tx.users.ensure('ria');
      await tx.messages.insert({ userId: 'ria', threadId: 't1', role: 'user', content: 'hi', metadataJson: '{}' });
      await tx.messages.insert(toolMessage('ria', 't1', 'c1'));
    });
    await store.close();
    // As a version-3 database was: no credential_keys (4), no calls (5), no quotas (6), no approval columns or audit (7), no mcp_sessions (8) yet.
    await pgQuery(url, 'DROP TABLE credential_keys');
    await pgQuery(url, 'DROP TABLE calls');
    await pgQuery(url, 'DROP TABLE quota_counts');
    await pgQuery(url, 'DROP TABLE mcp_sessions');
    await pgQuery(url, 'ALTER TABLE automation_jobs DROP COLUMN quotas');
    await pgQuery(url, 'DROP TABLE approval_audit');
    await pgQuery(url, 'ALTER TABLE automation_jobs DROP COLUMN approval');
    await pgQuery(url, 'DELETE FROM toolgate_schema');
    await pgQuery(url, 'INSERT INTO toolgate_schema (version) VALUES (3)');
    await assert.rejects(openPgStore(url, { log: silent, checkRows: STORED_ROW_CHECK }), (err: Error) => {
      assert.ok(err instanceof DatabaseOpenError, `a DatabaseOpenError, got ${err.name}`);
      assert.match(err.message, /migrating the schema from version 3 to \d+ refused: 1 stored row\(s\)/);
      assert.match(err.message, /messages msg_[\w-]+ \(user ria, thread t1\): metadata\.tool_agent_output/);
      return true;
    });
    const [v] = await pgQuery<{ version: number }>(url, 'SELECT max(version) AS version FROM toolgate_schema');
    assert.equal(v!.version, 3, 'nothing migrated');
    // Without the malformed row the same upgrade goes through.
    await pgQuery(url, "DELETE FROM messages WHERE role = 'tool'");
    const upgraded = await openPgStore(url, { log: silent, checkRows: STORED_ROW_CHECK });
    await upgraded.close();
    const [w] = await pgQuery<{ version: number }>(url, 'SELECT max(version) AS version FROM toolgate_schema');
    assert.equal(w!.version, SCHEMA_VERSION);
    // The upgraded tables are the declared ones (PG_UPGRADES 4–6).
    for (const table of ['credential_keys', 'calls', 'quota_counts', 'automation_jobs']) {
      const cols = await pgQuery<{ column_name: string }>(
        url,
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position",
        [table],
      );
      assert.deepEqual(cols.map((c) => c.column_name), SCHEMA.tables.find((t) => t.name === table)!.columns.map((c) => c.name), table);
    }
  });

  test('messages get 1, 2, 3… per (user, thread); two users share a thread id without sharing a thread', async () => {
    const { store } = await freshStore();
    try {
      await store.transaction(async (tx) => {
        await tx.users.ensure('alice');
        await tx.users.ensure('bob');
      });
      const seqs: number[] = [];
      for (const user of ['alice', 'bob', 'alice']) {
        const row = await store.transaction((tx) =>
          tx.messages.insert({ userId: user, threadId: 't1', role: 'user', content: `hi from ${user}`, metadataJson: '{}' }),
        );
        seqs.push(row.thread_seq);
      }
      assert.deepEqual(seqs, [1, 1, 2]);
      const alice = await store.read((tx) => tx.messages.page('alice', 't1', undefined, 50));
      assert.deepEqual(alice.rows.map((r) => r.content), ['hi from alice', 'hi from alice']);
      const threads = await store.read((tx) => tx.threads.list('bob', null, 10));
      assert.deepEqual(threads.map((t) => [t.thread_id, t.message_count]), [['t1', 1]]);
      assert.equal(await store.read((tx) => tx.threads.exists('carol', 't1')), false);
    } finally {
      await store.close();
    }
  });

  test('two daemons racing on one tool_call_id: one tool message and one call record, the loser gets StoreConflictError', async () => {
    const db = await freshPgDatabase();
    const [a, b] = await Promise.all([openPgStore(db.url, { log: silent }), openPgStore(db.url, { log: silent })]);
    try {
      await a.transaction((tx) => tx.users.ensure('alice'));
      const attempt = (s: PgStore, content: string) =>
        s.transaction(async (tx) => {
          await tx.toolCalls.record({
            user_id: 'alice', thread_id: 't', tool_call_id: 'call-1', action: 'memory.read',
            args: '{"module":"memory","method":"read","input":{}}', args_sha256: 'h', outcome: '{"ok":true}', exit_code: 0,
          });
          return tx.messages.insert(toolMessage('alice', 't', 'call-1', content));
        });
      const results = await Promise.allSettled([attempt(a, 'from a'), attempt(b, 'from b')]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.equal(won.length, 1);
      assert.equal(lost.length, 1);
      assert.ok(lost[0]!.reason instanceof StoreConflictError, String(lost[0]!.reason));
      const rows = await pgQuery<{ n: number }>(db.url, "SELECT count(*)::int AS n FROM messages WHERE tool_call_id = 'call-1'");
      assert.equal(rows[0]!.n, 1);
      // The thread stays gapless: the loser's number went back.
      const next = await b.transaction((tx) => tx.messages.insert({ userId: 'alice', threadId: 't', role: 'user', content: 'next', metadataJson: '{}' }));
      assert.equal(next.thread_seq, 2);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('a second tool message for the same call in one unit is a conflict, and the unit leaves nothing behind', async () => {
    const { store, url } = await freshStore();
    try {
      await store.transaction((tx) => tx.users.ensure('alice'));
      await store.transaction((tx) => tx.messages.insert(toolMessage('alice', 't', 'c')));
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.memories.upsert('alice', 'k', 'v');
          await tx.messages.insert(toolMessage('alice', 't', 'c'));
        }),
        StoreConflictError,
      );
      assert.deepEqual(await pgQuery(url, 'SELECT * FROM memories'), []);
    } finally {
      await store.close();
    }
  });

  test('a savepoint undoes only its own writes', async () => {
    const { store } = await freshStore();
    try {
      await store.transaction(async (tx) => {
        await tx.users.ensure('alice');
        await tx.memories.upsert('alice', 'kept', '1');
        await assert.rejects(
          tx.savepoint(async (inner) => {
            await inner.memories.upsert('alice', 'undone', '2');
            throw new Error('item failed');
          }),
          /item failed/,
        );
      });
      const keys = (await store.read((tx) => tx.memories.page('alice', null, 100))).map((m) => m.key);
      assert.deepEqual(keys, ['kept']);
    } finally {
      await store.close();
    }
  });

  test('held writes: a failing savepoint drops its own, a read of their table sees them, the last statement carries the rest', async () => {
    const { store, url } = await freshStore();
    const fields = (title: string) => ({ title, start_at: '2026-10-01T09:00:00Z', end_at: '2026-10-01T10:00:00Z' });
    try {
      const seen = await store.transaction(async (tx) => {
        await tx.users.ensure('bob');
        await assert.rejects(
          tx.savepoint(async (inner) => {
            await inner.events.create('bob', fields('undone'));
            throw new Error('item failed');
          }),
          /item failed/,
        );
        await tx.savepoint((inner) => inner.events.create('bob', fields('kept')));
        const visible = await tx.events.listVisible('bob', Date.parse('2026-10-01T00:00:00Z'), Date.parse('2026-10-02T00:00:00Z'), null, 100);
        await tx.events.create('bob', fields('after the read'));
        await tx.messages.insert(toolMessage('bob', 't', 'c'), { last: true });
        return visible.map((e) => e.title);
      });
      assert.deepEqual(seen, ['kept'], 'the read saw the held event, not the undone one');
      const titles = (await pgQuery<{ title: string }>(url, 'SELECT title FROM events ORDER BY title')).map((r) => r.title);
      assert.deepEqual(titles, ['after the read', 'kept']);
      assert.equal((await pgQuery(url, "SELECT 1 FROM messages WHERE tool_call_id = 'c'")).length, 1);
    } finally {
      await store.close();
    }
  });

  test('a last statement that conflicts takes every held write of its unit down with it', async () => {
    const { store, url } = await freshStore();
    try {
      await store.transaction((tx) => tx.users.ensure('alice'));
      await store.transaction((tx) => tx.messages.insert(toolMessage('alice', 't', 'c'), { last: true }));
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.events.create('alice', { title: 'held', start_at: '2026-10-01T09:00:00Z', end_at: '2026-10-01T10:00:00Z' });
          await tx.toolCalls.record({ user_id: 'alice', thread_id: 't', tool_call_id: 'c', action: 'calendar.create', args: '{}', args_sha256: 'x', outcome: '{}', exit_code: 0 });
          return tx.messages.insert(toolMessage('alice', 't', 'c'), { last: true });
        }),
        StoreConflictError,
      );
      assert.deepEqual(await pgQuery(url, 'SELECT * FROM events'), []);
      assert.deepEqual(await pgQuery(url, 'SELECT * FROM tool_calls'), []);
      assert.deepEqual(await pgQuery(url, "SELECT last_seq FROM threads WHERE id = 't'"), [{ last_seq: 1 }], 'the thread stays gapless');
    } finally {
      await store.close();
    }
  });

  test('metadata round-trips as JSON; content comes back byte for byte', async () => {
    const { store } = await freshStore();
    try {
      await store.transaction((tx) => tx.users.ensure('alice'));
      const content = '{"status":"success","data":{"z":1,"a":"é\\u0000"}}';
      const meta = { tool_agent_output: { z: 1, a: [1, 2, { b: null }] } };
      await store.transaction((tx) => tx.messages.insert({ ...toolMessage('alice', 't', 'c'), content, metadataJson: JSON.stringify(meta) }));
      const row = await store.read((tx) => tx.messages.getToolMessage('alice', 't', 'c'));
      assert.equal(row!.content, content);
      assert.deepEqual(JSON.parse(row!.metadata), meta);
    } finally {
      await store.close();
    }
  });

  test("recovery at start skips a call another live daemon is still finishing, and takes it once that daemon is gone", async () => {
    const db = await freshPgDatabase();
    const [a, b] = await Promise.all([openPgStore(db.url, { log: silent }), openPgStore(db.url, { log: silent })]);
    try {
      await a.transaction(async (tx) => {
        await tx.users.ensure('alice');
        await tx.toolCalls.record({
          user_id: 'alice', thread_id: 't', tool_call_id: 'busy', action: 'memory.read',
          args: '{}', args_sha256: 'h', outcome: '{"ok":true}', exit_code: 0,
        });
      });
      const release = await a.holdCall('alice', 't', 'busy');
      assert.deepEqual(await b.read((tx) => tx.toolCalls.withoutMessage()), [], 'held by a live daemon');
      await release();
      assert.deepEqual((await b.read((tx) => tx.toolCalls.withoutMessage())).map((c) => c.tool_call_id), ['busy']);
      // A daemon that dies holding the mark releases it with its connection.
      await a.holdCall('alice', 't', 'busy');
      await a.close();
      assert.deepEqual((await b.read((tx) => tx.toolCalls.withoutMessage())).map((c) => c.tool_call_id), ['busy']);
    } finally {
      await b.close().catch(() => {});
    }
  });

  describe('LISTEN/NOTIFY fan-out', () => {
    test('a watcher on daemon A receives what daemon B commits, in thread order, once', async () => {
      const db = await freshPgDatabase();
      const [a, b] = await Promise.all([openPgStore(db.url, { log: silent }), openPgStore(db.url, { log: silent })]);
      try {
        await b.transaction((tx) => tx.users.ensure('alice'));
        const got: MessageRow[] = [];
        const feed = await a.threadFeed((_ref, rows) => got.push(...rows));
        await feed.watch({ userId: 'alice', threadId: 't' });
        // Concurrent writers on one thread: commits serialise on the thread row.
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            b.transaction((tx) => tx.messages.insert({ userId: 'alice', threadId: 't', role: 'user', content: `m${i}`, metadataJson: '{}' })),
          ),
        );
        // Another thread nobody watches here is not read.
        await b.transaction((tx) => tx.messages.insert({ userId: 'alice', threadId: 'other', role: 'user', content: 'o', metadataJson: '{}' }));
        await waitFor(() => got.length >= 20, () => `20 notifications, got ${got.length}`);
        // Our own pokes (a local commit) do not deliver twice: what a poke delivers, it delivers before a later
        // commit's message (the feed reads each thread in order), so one more commit is the barrier.
        await feed.poke({ userId: 'alice', threadId: 't' }, 20);
        await b.transaction((tx) => tx.messages.insert({ userId: 'alice', threadId: 't', role: 'user', content: 'barrier', metadataJson: '{}' }));
        await waitFor(() => got.length >= 21, () => `21 notifications, got ${got.length}`);
        assert.deepEqual(got.map((r) => r.thread_seq), Array.from({ length: 21 }, (_, i) => i + 1));
        assert.ok(got.every((r) => r.thread_id === 't'));
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    /** A plain session LISTENing on the fan-out's channel: the seqs it hears, in order. */
    async function listener(url: string): Promise<{ seqs: number[]; close(): Promise<void> }> {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const seqs: number[] = [];
      client.on('notification', (n) => seqs.push((JSON.parse(n.payload ?? '{}') as { s: number }).s));
      await client.query(`LISTEN ${THREAD_EVENTS_CHANNEL}`);
      return { seqs, close: () => client.end() };
    }

    test("the call's commit sends no NOTIFY; the notifier sends one after it, a thread's pending ones coalesced to the newest", async () => {
      const db = await freshPgDatabase();
      const heard = await listener(db.url);
      const notifier = new PgThreadNotifier(db.url, silent);
      try {
        // All in one tick: the first goes out alone, the 99 that arrive while it is sent become one naming seq 100.
        for (let s = 1; s <= 100; s++) notifier.committed({ userId: 'alice', threadId: 't', messageId: `msg_${s}`, seq: s });
        await waitFor(() => heard.seqs.includes(100), () => `seq 100, heard ${JSON.stringify(heard.seqs)}`);
        assert.deepEqual(heard.seqs, [1, 100]);
        // An older seq than one pending never replaces it; a long id is named by its message.
        const long = 'x'.repeat(8_000);
        notifier.committed({ userId: 'alice', threadId: long, messageId: 'msg_long', seq: 7 });
        await waitFor(() => heard.seqs.length === 3, () => `3 notifications, heard ${JSON.stringify(heard.seqs)}`);
        assert.equal(heard.seqs[2], 7);
      } finally {
        await notifier.close();
        await heard.close();
      }
    });

    test("while other units run, a commit's notification waits for them (at most a few ms) and goes with theirs", async () => {
      const db = await freshPgDatabase();
      const heard = await listener(db.url);
      const notifier = new PgThreadNotifier(db.url, silent);
      try {
        notifier.committed({ userId: 'alice', threadId: 't', messageId: 'msg_1', seq: 1 }, true);
        notifier.committed({ userId: 'alice', threadId: 't', messageId: 'msg_2', seq: 2 }, true);
        notifier.idle();
        await waitFor(() => heard.seqs.includes(2), () => `seq 2, heard ${JSON.stringify(heard.seqs)}`);
        assert.deepEqual(heard.seqs, [2], 'one notification for both');
        // Units that never end do not hold it back for long.
        notifier.committed({ userId: 'alice', threadId: 't', messageId: 'msg_3', seq: 3 }, true);
        await waitFor(() => heard.seqs.includes(3), () => `seq 3 without idle(), heard ${JSON.stringify(heard.seqs)}`);
      } finally {
        await notifier.close();
        await heard.close();
      }
    });

    test('a notification whose connection was cut is sent again once the notifier reconnects', async () => {
      const db = await freshPgDatabase();
      const heard = await listener(db.url);
      const lines: string[] = [];
      const notifier = new PgThreadNotifier(db.url, { log: (level: string, msg: string) => lines.push(`${level}: ${msg}`) });
      try {
        notifier.committed({ userId: 'alice', threadId: 't', messageId: 'msg_1', seq: 1 });
        await waitFor(() => heard.seqs.length === 1, () => 'the first notification');
        await pgQuery(db.url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%pg_notify%' AND pid <> pg_backend_pid()");
        await waitFor(() => lines.some((l) => /^warn: lost the database connection that sends thread events/.test(l)), () => lines.join('\n'));
        notifier.committed({ userId: 'alice', threadId: 't', messageId: 'msg_2', seq: 2 });
        await waitFor(() => heard.seqs.includes(2), () => `seq 2 after the reconnect, heard ${JSON.stringify(heard.seqs)}; log ${lines.join(' | ')}`);
        assert.equal(notifier.waiting(), 0);
      } finally {
        await notifier.close();
        await heard.close();
      }
    });

    test('after losing its connection the listener reconnects, says so, and delivers what it missed', async () => {
      const db = await freshPgDatabase();
      const lines: string[] = [];
      const log = { log: (level: string, msg: string) => lines.push(`${level}: ${msg}`) };
      const [a, b] = await Promise.all([openPgStore(db.url, { log }), openPgStore(db.url, { log: silent })]);
      try {
        await b.transaction((tx) => tx.users.ensure('alice'));
        const got: number[] = [];
        const feed = await a.threadFeed((_ref, rows) => got.push(...rows.map((r) => r.thread_seq)));
        await feed.watch({ userId: 'alice', threadId: 't' });
        const insert = (n: number) =>
          b.transaction((tx) => tx.messages.insert({ userId: 'alice', threadId: 't', role: 'user', content: `m${n}`, metadataJson: '{}' }));
        await insert(1);
        await waitFor(() => got.length === 1, () => `1 notification, got ${got.length}`);
        // Cut the listening session from the server side, then write while it is away.
        await pgQuery(db.url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'");
        await insert(2);
        await insert(3);
        await waitFor(() => got.length === 3, () => `3 notifications, got ${got.length}`);
        await insert(4);
        await waitFor(() => got.length === 4, () => `4 notifications, got ${got.length}`);
        assert.deepEqual(got, [1, 2, 3, 4]);
        assert.ok(lines.some((l) => /^warn: lost the database connection/.test(l)), lines.join('\n'));
        assert.ok(lines.some((l) => /^info: reconnected to the database/.test(l)), lines.join('\n'));
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });
  });
});
