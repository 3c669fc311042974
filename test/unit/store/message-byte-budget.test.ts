/**
 * Contract section 21: no replay grows the daemon by more than a small
 * multiple of `limits.max_result_bytes`. `history/get` and the AG-UI replay
 * read messages through `page` and `messagesAfter` with a byte budget: a page
 * ends before its rows' content and metadata exceed it (at least one row), and
 * a row larger than the whole budget — stored before results were bounded —
 * comes cut, its start and a note, with no metadata. On both engines.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { openPgStore } from '../../../src/store/pg/pg-store.js';
import type { MessageRow, Store } from '../../../src/store/store.js';
import { tempDir } from '../../helpers/repo.js';
import { dropAllFreshDatabases, freshPgDatabase, needsPg } from '../../helpers/pg.js';

after(dropAllFreshDatabases);

const BUDGET = 10_000;
const SMALL = 3_000;
const HUGE = 200_000;

/** Twelve messages: 3,000-byte ones, the fifth a 200,000-byte one (an "é" is two bytes: sizes are bytes, not characters). */
async function fill(store: Store): Promise<MessageRow[]> {
  const rows: MessageRow[] = [];
  await store.transaction((tx) => tx.users.ensure('alice'));
  for (let i = 0; i < 12; i++) {
    const content = i === 4 ? 'é'.repeat(HUGE / 2) : `${i}`.padEnd(SMALL, 'x');
    rows.push(
      await store.transaction((tx) =>
        tx.messages.insert({ userId: 'alice', threadId: 't', role: i === 4 ? 'tool' : 'user', content, metadataJson: i === 4 ? JSON.stringify({ big: 'y'.repeat(HUGE) }) : '{}', toolCallId: i === 4 ? 'c4' : undefined, status: i === 4 ? 'success' : undefined }),
      ),
    );
  }
  return rows;
}

const bytesOf = (rows: MessageRow[]) => rows.reduce((n, r) => n + Buffer.byteLength(r.content) + Buffer.byteLength(r.metadata), 0);

async function checks(store: Store): Promise<void> {
  const stored = await fill(store);

  // history/get's direction: newest first, pages of at most the budget, every message once.
  const seen: MessageRow[] = [];
  let before: string | undefined;
  for (;;) {
    const b = before;
    const page = await store.read((tx) => tx.messages.page('alice', 't', b, 50, { withMetadata: false, maxBytes: BUDGET }));
    assert.ok(page.rows.length >= 1);
    assert.ok(bytesOf(page.rows) <= BUDGET + BUDGET / 2, `a page of ${bytesOf(page.rows)} bytes`);
    seen.unshift(...page.rows);
    if (page.nextBefore === null) break;
    before = page.nextBefore;
  }
  assert.deepEqual(seen.map((r) => r.id), stored.map((r) => r.id), 'every message once, in order');
  const cut = seen[4]!;
  assert.equal(cut.cut, true);
  assert.match(cut.content, /^é+\n\[toolgate: this stored message is 200000 bytes, more than limits\.max_result_bytes; only its start is shown\]$/);
  assert.equal(cut.metadata, '{}');
  assert.equal(cut.tool_call_id, 'c4');
  for (const [i, r] of seen.entries()) if (i !== 4) assert.equal(r.content, stored[i]!.content, 'the others whole');

  // The AG-UI replay's direction: oldest first, with metadata, the same bound.
  const replayed: MessageRow[] = [];
  for (let after = 0; ; ) {
    const a = after;
    const rows = await store.read((tx) => tx.messages.messagesAfter('alice', 't', a, 500, BUDGET));
    if (rows.length === 0) break;
    assert.ok(bytesOf(rows) <= BUDGET + BUDGET / 2, `a replay page of ${bytesOf(rows)} bytes`);
    replayed.push(...rows);
    after = rows.at(-1)!.thread_seq;
  }
  assert.deepEqual(replayed.map((r) => r.id), stored.map((r) => r.id));
  assert.equal(replayed[4]!.cut, true);
  assert.equal(replayed[4]!.metadata, '{}');

  // Without a budget nothing changes: the whole row.
  const whole = await store.read((tx) => tx.messages.messagesAfter('alice', 't', 4, 1));
  assert.equal(whole[0]!.content.length, HUGE / 2);
  assert.equal(whole[0]!.cut, undefined);
}

describe('messages read under a byte budget', () => {
  test('SQLite', async () => {
    const store = openSqliteStore(join(tempDir(), 'toolgate.db'));
    try {
      await checks(store);
    } finally {
      await store.close();
    }
  });

  test('PostgreSQL', needsPg, async () => {
    const db = await freshPgDatabase();
    const store = await openPgStore(db.url, { log: { log: () => {} } });
    try {
      await checks(store);
    } finally {
      await store.close();
    }
  });
});
