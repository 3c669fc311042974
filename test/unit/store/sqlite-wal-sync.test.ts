/**
 * `synchronous=FULL` with the fsync off the JavaScript thread (sqlite/wal-sync.ts):
 * the connection commits at NORMAL, and a group's answers — and every read —
 * wait for an fdatasync of the WAL file; the next group runs meanwhile; a sync
 * the disk refuses fails the group's calls instead of acknowledging them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { openDatabase } from '../../../src/store/database.js';
import { openSqliteStore, SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { WalSync } from '../../../src/store/sqlite/wal-sync.js';
import { tempDir } from '../../helpers/repo.js';

/** A WalSync whose syncs finish only when the test says so. */
class GatedSync extends WalSync {
  readonly pending: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  constructor() {
    super('/nonexistent-wal');
  }
  override sync(): Promise<void> {
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
  }
  override async close(): Promise<void> {}
}

function gatedStore(): { store: SqliteStore; gate: GatedSync } {
  const gate = new GatedSync();
  const store = new SqliteStore(openDatabase(join(tempDir(), 'toolgate.db'), { synchronous: 'NORMAL' }), gate);
  return { store, gate };
}

/** Turns of the event loop, enough for a group to open, run and commit. */
async function turns(n = 50): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

test('a group’s answers wait for the WAL sync, and so do reads', async () => {
  const { store, gate } = gatedStore();
  let answered = false;
  let read = false;
  const call = store.transaction((tx) => tx.users.ensure('u')).then(() => (answered = true));
  await turns();
  assert.equal(gate.pending.length, 1, 'the group committed and asked for a sync');
  assert.equal(answered, false, 'no answer before the sync');
  const reading = store.read((tx) => tx.users.exists('u')).then((v) => ((read = true), v));
  await turns();
  assert.equal(read, false, 'a read does not see what is not yet durable');
  gate.pending[0]!.resolve();
  await call;
  assert.equal(await reading, true);
  await store.close();
});

test('the next group commits while the previous one’s sync is outstanding', async () => {
  const { store, gate } = gatedStore();
  const first = store.transaction((tx) => tx.users.ensure('a'));
  await turns();
  assert.equal(gate.pending.length, 1);
  let secondRan = false;
  const second = store.transaction(async (tx) => {
    secondRan = true;
    await tx.users.ensure('b');
  });
  await turns();
  assert.equal(secondRan, true, 'the second group ran during the first sync');
  assert.equal(gate.pending.length, 2, 'and committed, asking for its own sync');
  gate.pending[0]!.resolve();
  gate.pending[1]!.resolve();
  await Promise.all([first, second]);
  await store.close();
});

test('a sync the disk refuses fails the group’s calls: nothing is acknowledged that may be lost', async () => {
  const { store, gate } = gatedStore();
  const call = store.transaction((tx) => tx.users.ensure('u'));
  await turns();
  gate.pending[0]!.reject(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
  await assert.rejects(call, /EIO/);
  // The store goes on: the next call syncs again.
  const next = store.transaction((tx) => tx.users.ensure('v'));
  await turns();
  gate.pending[1]!.resolve();
  await next;
  await store.close();
});

test('a FULL file store with deferred sync runs its connection at NORMAL, syncs the -wal file after each group, and describes itself as FULL', async () => {
  const file = join(tempDir(), 'toolgate.db');
  // Count datasync calls on any FileHandle, with the file they were made on.
  const probe = await open(file + '.probe', 'w');
  const proto = Object.getPrototypeOf(probe) as { datasync(): Promise<void> };
  await probe.close();
  const original = proto.datasync;
  const synced: number[] = [];
  proto.datasync = function (this: { fd: number }) {
    synced.push(this.fd);
    return original.call(this);
  };
  const store = openSqliteStore(file, { sqliteSync: 'deferred' });
  try {
    assert.equal(store.connection.pragma('synchronous', { simple: true }), 1, 'the connection itself runs at NORMAL');
    assert.equal((await store.describe()).synchronous, 'FULL');
    await store.transaction((tx) => tx.users.ensure('u'));
    await Promise.all(Array.from({ length: 8 }, (_, i) => store.transaction((tx) => tx.memories.upsert('u', `k${i}`, 'v'))));
    assert.ok(synced.length >= 2, `a sync per group (${synced.length})`);
    const { readlinkSync } = await import('node:fs');
    for (const fd of new Set(synced)) assert.equal(readlinkSync(`/proc/self/fd/${fd}`), `${file}-wal`);
  } finally {
    await store.close();
    proto.datasync = original;
  }
});

test('inline, the default, keeps SQLite’s own fsync inside COMMIT (synchronous=FULL on the connection)', async () => {
  const store = openSqliteStore(join(tempDir(), 'toolgate.db'));
  try {
    assert.equal(store.connection.pragma('synchronous', { simple: true }), 2);
    assert.equal((await store.describe()).synchronous, 'FULL');
  } finally {
    await store.close();
  }
});
