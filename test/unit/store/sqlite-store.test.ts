/**
 * The SQLite engine behind the store boundary, in process: the live
 * connection's `synchronous` pragma (FULL unless configured), group commit
 * (calls that arrive together share one COMMIT; each settles after it; one
 * failing call takes no other down), and migration 3 (threads per user,
 * thread_seq) on a database written by the previous schema; migration 4
 * (credential_keys) and its repository.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync, readdirSync, readlinkSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStore, type SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { MIGRATIONS } from '../../../src/store/migrations.js';
import { startCheckpointer } from '../../../src/store/sqlite/checkpointer.js';
import { createDaemon } from '../../../src/app/serve.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { tempDir } from '../../helpers/repo.js';
import { TEST_BEARER_SECRET } from '../../helpers/tokens.js';

/** Counts the engine's COMMITs and BEGINs (transaction control goes through its private `run`). */
function countCommits(store: SqliteStore): { commits: number; begins: number } {
  const counter = { commits: 0, begins: 0 };
  const engine = store as unknown as { run(sql: string): void };
  const run = engine.run.bind(store);
  engine.run = (sql: string) => {
    if (sql === 'COMMIT') counter.commits++;
    if (sql === 'BEGIN IMMEDIATE') counter.begins++;
    run(sql);
  };
  return counter;
}

test('the daemon’s store runs at FULL durability unless store.synchronous says NORMAL', async () => {
  for (const [config, expected] of [[undefined, 'FULL'], [{ store: { synchronous: 'NORMAL' } }, 'NORMAL'], [{ store: { synchronous: 'FULL' } }, 'FULL']] as const) {
    const dir = tempDir();
    let configFile: string | undefined;
    if (config) {
      configFile = join(dir, 'config.json');
      writeFileSync(configFile, JSON.stringify({ agents: { default: { enabled_skills: [], allowed_actions: ['memory.*'] } }, ...config }));
    }
    const daemon = await createDaemon(
      { transport: 'stdio', db: join(dir, 'toolgate.db'), config: configFile, dev: false, executor: 'inprocess', env: { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET } },
      createLogger(() => {}),
    );
    try {
      const d = await daemon.store.describe();
      assert.equal(d.synchronous, expected, `config ${JSON.stringify(config)}`);
      assert.equal(d.journalMode, 'wal');
    } finally {
      await daemon.store.close();
    }
  }
});

test('units that arrive together share one COMMIT; each settles after it, already visible to other connections', async () => {
  const file = join(tempDir(), 'toolgate.db');
  const store = openSqliteStore(file);
  const counter = countCommits(store);
  const other = new Database(file, { readonly: true });
  try {
    await store.transaction((tx) => tx.users.ensure('u'));
    counter.commits = 0;
    const seenAtResolve: number[] = [];
    const units = Array.from({ length: 20 }, (_, i) =>
      store
        .transaction((tx) => tx.memories.upsert('u', `k${i}`, 'v'))
        .then(() => seenAtResolve.push((other.prepare("SELECT count(*) AS n FROM memories WHERE key = ?").get(`k${i}`) as { n: number }).n)),
    );
    await Promise.all(units);
    assert.equal(counter.commits, 1, 'one group, one commit');
    assert.deepEqual(seenAtResolve, Array(20).fill(1), 'every unit was committed when its promise resolved');
  } finally {
    other.close();
    await store.close();
  }
});

/** SQLite temporary files this process holds open (an unlinked `etilqs_*` file under the temp folder). */
function openSqliteTempFiles(): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.includes('etilqs_')) out.push(target);
    } catch {
      /* closed meanwhile */
    }
  }
  return out;
}

test('a group’s per-unit savepoints keep their statement journal in memory: no temporary file outside the data folder', { skip: process.platform !== 'linux' }, async () => {
  const store = openSqliteStore(join(tempDir(), 'toolgate.db'));
  try {
    // Rows that every unit then rewrites: each savepoint journals the pages it changes.
    await store.transaction(async (tx) => {
      await tx.users.ensure('u');
      for (let i = 0; i < 200; i++) await tx.memories.upsert('u', `k${i}`, 'x'.repeat(2000));
    });
    let seen: string[] = [];
    const units = Array.from({ length: 40 }, (_, u) =>
      store.transaction(async (tx) => {
        for (let i = 0; i < 200; i += 7) await tx.memories.upsert('u', `k${i}`, String(u).repeat(2000));
        // The last unit runs while the group is still open: by then the journal is well past 64 KiB.
        if (u === 39) seen = openSqliteTempFiles();
      }),
    );
    await Promise.all(units);
    assert.deepEqual(seen, [], 'no statement journal spilled to a temporary file');
    assert.equal(store.connection.pragma('temp_store', { simple: true }), 2, 'temp_store = MEMORY');
  } finally {
    await store.close();
  }
});

test('with a checkpoint thread, committed WAL frames reach the database file off the calls’ thread', { timeout: 60_000 }, async () => {
  const file = join(tempDir(), 'toolgate.db');
  const store = openSqliteStore(file);
  const errors: string[] = [];
  store.useCheckpointer(startCheckpointer(file, 'FULL', (e) => errors.push(e)));
  const engine = store as unknown as { run(sql: string): void };
  const run = engine.run.bind(store);
  const checkpointsHere: string[] = [];
  let sizeAtFirstHere: number | undefined;
  engine.run = (sql: string) => {
    if (/checkpoint/i.test(sql)) {
      sizeAtFirstHere ??= statSync(file).size;
      checkpointsHere.push(sql);
    }
    run(sql);
  };
  try {
    // Every write so far (the schema included) sits in the WAL: the daemon's connection no longer
    // checkpoints at SQLite's default threshold, so only the thread moves pages into the file.
    const before = statSync(file).size;
    await store.transaction((tx) => tx.users.ensure('u'));
    for (let i = 0; i < 100; i++) await store.transaction((tx) => tx.memories.upsert('u', `k${i}`, 'x'.repeat(2000)));
    while (statSync(file).size <= before) await new Promise((r) => setTimeout(r, 20));
    // This thread only ever copies the tail the thread's checkpoint left (checkpointer.ts, `takeTail`):
    // by its first, the thread had already moved pages into the file.
    assert.ok(checkpointsHere.every((sql) => sql === 'PRAGMA wal_checkpoint(PASSIVE)'), checkpointsHere.join('; '));
    if (sizeAtFirstHere !== undefined) assert.ok(sizeAtFirstHere > before, 'the thread checkpointed before this connection did');
    assert.deepEqual(errors, []);
    assert.equal((store.connection.prepare('SELECT count(*) AS n FROM memories').get() as { n: number }).n, 100);
  } finally {
    await store.close();
  }
});

for (const synchronous of ['FULL', 'NORMAL'] as const) {
  // At FULL the connection copies the tail the thread's checkpoint left (checkpointer.ts, `takeTail`); at NORMAL a
  // commit has no fsync to shorten, so the tail's fsyncs stay off the calls' thread and the WAL is the safety net's.
  const expected = synchronous === 'FULL' ? 'starts over after each checkpoint' : 'is left to the safety net, no checkpoint on the calls’ thread';
  test(`under steady writes at ${synchronous} the WAL ${expected}`, { timeout: 60_000 }, async () => {
    const file = join(tempDir(), 'toolgate.db');
    const store = openSqliteStore(file, { synchronous });
    const errors: string[] = [];
    store.useCheckpointer(startCheckpointer(file, synchronous, (e) => errors.push(e)));
    const engine = store as unknown as { run(sql: string): void };
    const run = engine.run.bind(store);
    let checkpointsHere = 0;
    engine.run = (sql: string) => {
      if (/checkpoint/i.test(sql)) checkpointsHere++;
      run(sql);
    };
    try {
      await store.transaction((tx) => tx.users.ensure('u'));
      // Back-to-back commits of ~3 pages each: the thread's checkpoint never finds the WAL idle, so without the
      // tail copied between groups the WAL only grows (to the 10,000-page safety net, ~40 MB).
      // A restart shows in the WAL header: its checkpoint sequence number (bytes 12–15) goes up by one.
      const wal = openSync(`${file}-wal`, 'r');
      const header = Buffer.alloc(4);
      const sequence = () => (readSync(wal, header, 0, 4, 12), header.readUInt32BE(0));
      let restarts = 0;
      let last = sequence();
      for (let i = 0; i < 2500; i++) {
        await store.transaction(async (tx) => {
          await tx.memories.upsert('u', `a${i % 50}`, 'x'.repeat(3000));
          await tx.memories.upsert('u', `b${i % 50}`, 'y'.repeat(3000));
        });
        const now = sequence();
        if (now !== last) restarts++;
        last = now;
      }
      closeSync(wal);
      assert.deepEqual(errors, []);
      if (synchronous === 'FULL') {
        // One checkpoint every 64 commits (the first once the thread is up): ~35 of them in 2,500 commits.
        assert.ok(restarts >= 10, `the WAL started over ${restarts} times in 2,500 commits`);
      } else {
        assert.equal(checkpointsHere, 0, 'no checkpoint on the calls’ thread at NORMAL');
      }
    } finally {
      await store.close();
    }
  });
}

test('a unit that throws is undone alone; the rest of its group commits', async () => {
  const store = openSqliteStore(join(tempDir(), 'toolgate.db'));
  const counter = countCommits(store);
  try {
    await store.transaction((tx) => tx.users.ensure('u'));
    counter.commits = 0;
    const results = await Promise.allSettled([
      store.transaction((tx) => tx.memories.upsert('u', 'a', '1')),
      store.transaction(async (tx) => {
        await tx.memories.upsert('u', 'b', '1');
        await tx.savepoint((t) => t.memories.upsert('u', 'b2', '1'));
        throw new Error('handler bug');
      }),
      store.transaction((tx) => tx.memories.upsert('u', 'c', '1')),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.equal(counter.commits, 1);
    const keys = await store.read(async (tx) => (await tx.memories.page('u', null, 100)).map((m) => m.key));
    assert.deepEqual(keys, ['a', 'c'], 'nothing of the failed unit, savepoint included, survives');
  } finally {
    await store.close();
  }
});

test('the first unit of a group fails alone too, and the group keeps its one transaction', async () => {
  const store = openSqliteStore(join(tempDir(), 'toolgate.db'));
  const counter = countCommits(store);
  try {
    await store.transaction((tx) => tx.users.ensure('u'));
    counter.commits = 0;
    counter.begins = 0;
    const results = await Promise.allSettled([
      store.transaction(async (tx) => {
        await tx.memories.upsert('u', 'first', '1');
        throw new Error('handler bug');
      }),
      store.transaction((tx) => tx.memories.upsert('u', 'second', '1')),
      store.transaction(async (tx) => {
        await tx.memories.upsert('u', 'third', '1');
        throw new Error('another bug');
      }),
      store.transaction((tx) => tx.memories.upsert('u', 'fourth', '1')),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'fulfilled', 'rejected', 'fulfilled']);
    // With units queued behind it the first runs in a savepoint too: its failure does not begin the group again.
    assert.deepEqual(counter, { commits: 1, begins: 1 }, 'one transaction for the group');
    assert.deepEqual(await store.read(async (tx) => (await tx.memories.page('u', null, 100)).map((m) => m.key)), ['fourth', 'second']);
  } finally {
    await store.close();
  }
});

test('a savepoint that throws undoes only its own writes (a batch item fails alone)', async () => {
  const store = openSqliteStore(join(tempDir(), 'toolgate.db'));
  try {
    await store.transaction(async (tx) => {
      await tx.users.ensure('u');
      await tx.memories.upsert('u', 'kept', '1');
      await tx.savepoint(async (t) => {
        await t.memories.upsert('u', 'dropped', '1');
        throw new Error('item failed');
      }).catch(() => {});
    });
    assert.deepEqual(await store.read(async (tx) => (await tx.memories.page('u', null, 100)).map((m) => m.key)), ['kept']);
  } finally {
    await store.close();
  }
});

test('migration 3 turns first-come threads into per-user ones and numbers each thread’s messages', async () => {
  const file = join(tempDir(), 'toolgate.db');
  const old = new Database(file);
  for (const m of MIGRATIONS.slice(0, 2)) old.exec(m);
  old.pragma('user_version = 2');
  const at = '2026-01-01T00:00:00.000Z';
  old.exec(`
    INSERT INTO users (id, created_at, updated_at) VALUES ('alice', '${at}', '${at}'), ('bob', '${at}', '${at}');
    INSERT INTO threads (id, user_id, created_at, updated_at) VALUES ('t1', 'alice', '${at}', '${at}'), ('t2', 'bob', '${at}', '${at}');
    INSERT INTO messages (id, thread_id, role, content, metadata, tool_call_id, status, created_at) VALUES
      ('m1', 't1', 'user', 'hello', '{}', NULL, NULL, '${at}'),
      ('m2', 't2', 'user', 'bob here', '{}', NULL, NULL, '${at}'),
      ('m3', 't1', 'tool', '{"status":"success"}', '{}', 'c1', 'success', '${at}');
    INSERT INTO tool_calls (thread_id, tool_call_id, user_id, action, args, args_sha256, outcome, exit_code, created_at)
      VALUES ('t1', 'c1', 'alice', 'memory.read', '{}', 'h', '{}', 0, '${at}');
  `);
  old.close();

  const store = openSqliteStore(file);
  try {
    assert.equal((await store.describe()).schemaVersion, MIGRATIONS.length);
    const page = await store.read((tx) => tx.messages.page('alice', 't1', undefined, 10));
    assert.deepEqual(page.rows.map((r) => [r.id, r.user_id, r.thread_seq]), [['m1', 'alice', 1], ['m3', 'alice', 2]]);
    assert.equal((await store.read((tx) => tx.toolCalls.get('alice', 't1', 'c1')))?.action, 'memory.read');
    assert.equal(await store.read((tx) => tx.threads.exists('bob', 't1')), false);
    const list = await store.read((tx) => tx.threads.list('alice', null, 10));
    assert.deepEqual(list.map((t) => [t.thread_id, t.message_count]), [['t1', 2]]);
    // New messages continue each thread's sequence; bob's t1 is a new thread of his own.
    const next = await store.transaction((tx) => tx.messages.insert({ userId: 'alice', threadId: 't1', role: 'user', content: 'again', metadataJson: '{}' }));
    assert.equal(next.thread_seq, 3);
    const bobs = await store.transaction((tx) => tx.messages.insert({ userId: 'bob', threadId: 't1', role: 'user', content: 'mine', metadataJson: '{}' }));
    assert.equal(bobs.thread_seq, 1);
  } finally {
    await store.close();
  }
});

test('credential keys: a round-1 database (version 2) migrates to the current schema with an empty credential_keys table; keys record idempotently, public only', async () => {
  const file = join(tempDir(), 'toolgate.db');
  const old = new Database(file);
  for (const m of MIGRATIONS.slice(0, 2)) old.exec(m);
  old.pragma('user_version = 2');
  old.close();

  const store = openSqliteStore(file);
  try {
    assert.equal((await store.describe()).schemaVersion, MIGRATIONS.length);
    assert.deepEqual(await store.read((tx) => tx.credentialKeys.list()), []);
    const jwk = { kty: 'OKP', crv: 'Ed25519', x: 'abc', alg: 'EdDSA', use: 'sig' };
    await store.transaction((tx) => tx.credentialKeys.record('kid-1', jwk));
    await store.transaction((tx) => tx.credentialKeys.record('kid-1', jwk));
    await store.transaction((tx) => tx.credentialKeys.record('kid-2', { ...jwk, x: 'def' }));
    const keys = await store.read((tx) => tx.credentialKeys.list());
    assert.deepEqual(keys.map((k) => k.kid).sort(), ['kid-1', 'kid-2']);
    assert.deepEqual(keys.find((k) => k.kid === 'kid-1')?.publicJwk, jwk);
    await assert.rejects(store.transaction((tx) => tx.credentialKeys.record('kid-3', { ...jwk, d: 'secret' })), /only a public key/);
    assert.equal((await store.read((tx) => tx.credentialKeys.list())).length, 2);
  } finally {
    await store.close();
  }
});

test("a message's created_at never decreases along its thread, even when the clock steps back", async (t) => {
  const store = openSqliteStore(join(tempDir(), 'clock.db'));
  try {
    await store.transaction((tx) => tx.users.ensure('alice'));
    const insert = (content: string) => store.transaction((tx) => tx.messages.insert({ userId: 'alice', threadId: 'clock', role: 'user', content, metadataJson: '{}' }));
    t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2031-01-01T12:00:01.000Z') });
    const first = await insert('first');
    t.mock.timers.setTime(Date.parse('2031-01-01T12:00:00.000Z')); // the clock steps back a second
    const second = await insert('second');
    t.mock.timers.reset();
    assert.equal(first.created_at, '2031-01-01T12:00:01.000Z');
    assert.equal(second.created_at, first.created_at, 'the message takes the thread’s last time, not the earlier clock');
    const stored = await store.read((tx) => tx.messages.page('alice', 'clock', undefined, 10));
    assert.deepEqual(stored.rows.map((r) => r.created_at), [first.created_at, first.created_at]);
  } finally {
    await store.close();
  }
});
