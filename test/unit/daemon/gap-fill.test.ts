/**
 * The thread-event bus fills a gap (an event that arrived ahead of its
 * predecessors) from the store: every message of the gap, however wide —
 * it once read at most 1,000 rows and counted the rest as missing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { storeEventSource } from '../../../src/threads/thread-event-source.js';
import { tempDir } from '../../helpers/repo.js';

test('a gap of 2,500 messages is read whole, in order, and nothing past its end', async () => {
  const store = openSqliteStore(join(tempDir(), 'gap.db'));
  try {
    await store.transaction(async (tx) => {
      await tx.users.ensure('ann');
      for (let i = 1; i <= 2_600; i++) await tx.messages.insert({ userId: 'ann', threadId: 't', role: 'user', content: `m${i}`, metadataJson: '{}' });
    });
    const source = storeEventSource(store);
    const gap = await source.between('ann', 't', 50, 2_551);
    assert.equal(gap.length, 2_500);
    assert.deepEqual(
      gap.map((r) => r.thread_seq),
      Array.from({ length: 2_500 }, (_, i) => 51 + i),
    );
    assert.deepEqual(await source.between('ann', 't', 7, 8), []);
    // A gap the store does not have all of yet ends where the store does.
    assert.equal((await source.between('ann', 't', 2_590, 3_000)).length, 10);
  } finally {
    await store.close();
  }
});
