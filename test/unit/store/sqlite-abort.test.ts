/**
 * The SQLite store with a call's signal (contract section 16) and another
 * process's write lock: the event loop keeps turning while the lock is held
 * (no busy handler blocks it), a unit aborted while it waits leaves at once,
 * a unit aborted while it ran is undone alone, and the rest commit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../../helpers/repo.js';

const turns = (n: number) =>
  new Promise<void>((resolve) => {
    let left = n;
    const tick = () => (--left > 0 ? setImmediate(tick) : resolve());
    setImmediate(tick);
  });

test('while another connection holds the write lock, the loop turns; an aborted waiting unit leaves at once', async () => {
  const file = join(tempDir(), 'abort.db');
  const store = openSqliteStore(file);
  const other = new Database(file);
  try {
    other.exec('BEGIN IMMEDIATE');
    const stop = new AbortController();
    const waiting = store.transaction((tx) => tx.users.ensure('aborted'), { signal: stop.signal });
    const kept = store.transaction((tx) => tx.users.ensure('kept'));
    const started = performance.now();
    await turns(50);
    // Fifty turns of the event loop while the lock is held: nothing sat in SQLite's busy handler.
    assert.ok(performance.now() - started < 4_000, 'the event loop was blocked');
    stop.abort(new Error('stopped while waiting'));
    await assert.rejects(waiting, /stopped while waiting/);
    other.exec('ROLLBACK');
    await kept;
    const users = await store.read(async (tx) => [await tx.users.exists('aborted'), await tx.users.exists('kept')]);
    assert.deepEqual(users, [false, true]);
  } finally {
    other.close();
    await store.close();
  }
});

test('a unit aborted while it runs is undone alone; the units of its group commit', async () => {
  const store = openSqliteStore(join(tempDir(), 'abort-group.db'));
  try {
    const stop = new AbortController();
    const a = store.transaction((tx) => tx.users.ensure('before'));
    const b = store.transaction(
      async (tx) => {
        await tx.users.ensure('undone');
        stop.abort(new Error('stopped while running'));
      },
      { signal: stop.signal },
    );
    const c = store.transaction((tx) => tx.users.ensure('after'));
    await assert.rejects(b, /stopped while running/);
    await Promise.all([a, c]);
    const users = await store.read(async (tx) => Promise.all(['before', 'undone', 'after'].map((u) => tx.users.exists(u))));
    assert.deepEqual(users, [true, false, true]);
    // An already aborted signal: the unit never runs.
    let ran = false;
    await assert.rejects(store.transaction(async () => void (ran = true), { signal: AbortSignal.abort(new Error('before')) }), /before/);
    assert.equal(ran, false);
  } finally {
    await store.close();
  }
});
