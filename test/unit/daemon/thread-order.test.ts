/**
 * The thread-event bus delivers a thread's messages in `thread_seq` order,
 * once, whichever publisher brought them and in whatever order they arrived
 * (contract §12: "once and in the thread's order"), and it releases a
 * thread's watch when its last listener leaves. Driven in process with a
 * scripted source; then against a real PostgreSQL feed whose NOTIFY is held
 * back, the interleaving a local call and another daemon's call produce.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ThreadEventBus, type StoredMessageEvent, type ThreadEventSource } from '../../../src/threads/thread-events.js';
import { storeEventSource } from '../../../src/threads/thread-event-source.js';
import { SubscriptionRegistry } from '../../../src/threads/subscriptions.js';
import type { Peer } from '../../../src/runtime/peer.js';
import type { MessageRow } from '../../../src/store/store.js';
import { openPgStore } from '../../../src/store/pg/pg-store.js';
import { PgThreadFeed } from '../../../src/store/pg/thread-feed.js';
import { dropAllFreshDatabases, freshPgDatabase, needsPg } from '../../helpers/pg.js';

const row = (seq: number, id = `msg_${seq}`): MessageRow => ({
  id,
  user_id: 'ann',
  thread_id: 't',
  thread_seq: seq,
  role: 'user',
  content: `m${seq}`,
  metadata: '{}',
  tool_call_id: null,
  status: null,
  created_at: '',
});

/** A source whose position and stored rows the test sets; records watch/unwatch. */
function scripted(position: number, stored: MessageRow[] = []) {
  const calls: string[] = [];
  let release: (() => void) | undefined;
  const positioned = new Promise<void>((r) => (release = r));
  const source: ThreadEventSource = {
    async watch(u, t) {
      calls.push(`watch ${u}/${t}`);
      await positioned;
      return position;
    },
    unwatch: (u, t) => void calls.push(`unwatch ${u}/${t}`),
    async between(_u, _t, after, before) {
      calls.push(`between ${after}..${before}`);
      return stored.filter((r) => r.thread_seq > after && r.thread_seq < before);
    },
  };
  return { source, calls, position: () => release!() };
}

function collect(bus: ThreadEventBus, userId = 'ann', threadId = 't') {
  const seen: StoredMessageEvent[] = [];
  const waiters: Array<() => void> = [];
  const stop = bus.listen(userId, threadId, (e) => {
    seen.push(e);
    for (const w of waiters.splice(0)) w();
  });
  const seqs = () => seen.map((e) => e.row.thread_seq);
  const until = async (n: number) => {
    while (seen.length < n) await new Promise<void>((r) => waiters.push(r));
  };
  return { seen, seqs, until, stop };
}

describe('thread-event bus order', { timeout: 20_000 }, () => {
  test('a local event that overtakes another daemon’s earlier one is held until it arrives', async () => {
    const s = scripted(3);
    const bus = new ThreadEventBus(s.source);
    const c = collect(bus);
    s.position();
    await bus.ready('ann', 't');
    // This daemon's call (seq 5) is published before another daemon's seq 4 reaches us.
    bus.publish({ userId: 'ann', threadId: 't', row: row(5), origin: 'conn-local' });
    assert.deepEqual(c.seqs(), [], 'seq 5 waits for seq 4');
    bus.publish({ userId: 'ann', threadId: 't', row: row(4) });
    assert.deepEqual(c.seqs(), [4, 5]);
    assert.equal(c.seen[1]!.origin, 'conn-local', 'the local event keeps its caller');
    // The feed's later copies of both are repeats.
    bus.publish({ userId: 'ann', threadId: 't', row: row(4) });
    bus.publish({ userId: 'ann', threadId: 't', row: row(5) });
    bus.publish({ userId: 'ann', threadId: 't', row: row(6) });
    assert.deepEqual(c.seqs(), [4, 5, 6]);
    assert.ok(!s.calls.some((x) => x.startsWith('between')), 'no store read when the predecessor came');
  });

  test('a predecessor nobody publishes is read from the store; one the store does not have either is skipped', async () => {
    const s = scripted(3, [row(4)]);
    const bus = new ThreadEventBus(s.source);
    const c = collect(bus);
    s.position();
    await bus.ready('ann', 't');
    bus.publish({ userId: 'ann', threadId: 't', row: row(5), origin: 'conn-local' });
    await c.until(2);
    assert.deepEqual(c.seqs(), [4, 5]);
    assert.equal(c.seen[0]!.origin, undefined, 'read back from the store');
    assert.deepEqual(s.calls.filter((x) => x.startsWith('between')), ['between 3..5']);
    // Seq 4's own publisher comes after the store's copy went out: a repeat, dropped.
    bus.publish({ userId: 'ann', threadId: 't', row: row(4), origin: 'conn-late' });
    assert.deepEqual(c.seqs(), [4, 5]);
    // seq 6 is known missing (the store has no such row): 7 is not held forever.
    bus.publish({ userId: 'ann', threadId: 't', row: row(7) });
    await c.until(3);
    assert.deepEqual(c.seqs(), [4, 5, 7]);
  });

  test('events published while the position is read are delivered in order, none lost', async () => {
    const s = scripted(6, [row(6)]);
    const bus = new ThreadEventBus(s.source);
    const c = collect(bus);
    let ready = false;
    void bus.ready('ann', 't').then(() => (ready = true));
    bus.publish({ userId: 'ann', threadId: 't', row: row(7) });
    bus.publish({ userId: 'ann', threadId: 't', row: row(6) });
    await new Promise((r) => setImmediate(r));
    assert.equal(ready, false);
    assert.deepEqual(c.seqs(), [], 'held until the position is known');
    s.position();
    await bus.ready('ann', 't');
    assert.deepEqual(c.seqs(), [6, 7], 'both came after the listener joined');
  });

  test('a caller waiting for its held message resumes when it is delivered, or when the last listener leaves', async () => {
    const s = scripted(3);
    // The store's read of the gap answers only when the test lets it: a loaded machine may fire the bus's
    // gap timer before the first assertion, and the read must not settle the caller meanwhile.
    let allowRead!: () => void;
    const readAllowed = new Promise<void>((r) => (allowRead = r));
    const between = s.source.between.bind(s.source);
    s.source.between = async (...args) => {
      await readAllowed;
      return between(...args);
    };
    const bus = new ThreadEventBus(s.source);
    const c = collect(bus);
    s.position();
    await bus.ready('ann', 't');
    // The caller's part of the dispatch records what the listener had been handed when it ran.
    const parts: Array<{ seq: number; heard: number[] }> = [];
    const caller = (seq: number) => () => parts.push({ seq, heard: c.seqs() });
    bus.publish({ userId: 'ann', threadId: 't', row: row(5), origin: 'conn-local', dispatched: caller(5) });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(parts, [], 'seq 5 is held for seq 4: the caller waits');
    bus.publish({ userId: 'ann', threadId: 't', row: row(4) });
    allowRead();
    assert.deepEqual(parts, [{ seq: 5, heard: [4, 5] }], 'the caller goes on right after its message went out in order');
    bus.publish({ userId: 'ann', threadId: 't', row: row(7), origin: 'conn-local', dispatched: caller(7) });
    assert.equal(parts.length, 1, 'seq 7 is held for seq 6');
    c.stop();
    assert.deepEqual(parts[1], { seq: 7, heard: [4, 5] }, 'the last listener left: the caller goes on, its message sent to nobody');
  });

  test('the caller’s part of a dispatch runs once, whichever copy of its message the bus keeps', async () => {
    const s = scripted(1);
    s.position();
    const bus = new ThreadEventBus(s.source);
    const c = collect(bus);
    await bus.ready('ann', 't');
    const ran: string[] = [];
    const part = (name: string) => () => ran.push(`${name} after ${c.seqs().join(',')}`);
    // Nobody listens to another thread: at once.
    bus.publish({ userId: 'ann', threadId: 'other', row: row(1), origin: 'conn-a', dispatched: part('other') });
    assert.deepEqual(ran, ['other after ']);
    // Held for seq 2: the store's copy first, then the caller's own (kept, with its part), then a second caller's.
    bus.publish({ userId: 'ann', threadId: 't', row: row(3) });
    bus.publish({ userId: 'ann', threadId: 't', row: row(3), origin: 'conn-a', dispatched: part('a') });
    bus.publish({ userId: 'ann', threadId: 't', row: row(3), origin: 'conn-b', dispatched: part('b') });
    assert.equal(ran.length, 1, 'held: nobody goes on yet');
    bus.publish({ userId: 'ann', threadId: 't', row: row(2) });
    assert.deepEqual(c.seqs(), [2, 3], 'seq 3 went out once');
    assert.equal(c.seen.at(-1)!.origin, 'conn-a', 'the copy that knows its caller was kept');
    assert.deepEqual(ran.slice(1), ['a after 2,3', 'b after 2,3'], 'each part once, right after the listeners');
    // A copy of a message the listeners already had: the caller goes on at once.
    bus.publish({ userId: 'ann', threadId: 't', row: row(3), origin: 'conn-c', dispatched: part('c') });
    assert.deepEqual(ran.slice(3), ['c after 2,3']);
    c.stop();
  });

  test('without a source the first event sets the position and the order holds from there', () => {
    const bus = new ThreadEventBus();
    const c = collect(bus);
    bus.publish({ userId: 'ann', threadId: 't', row: row(2) });
    bus.publish({ userId: 'ann', threadId: 't', row: row(2) });
    bus.publish({ userId: 'ann', threadId: 't', row: row(3) });
    assert.deepEqual(c.seqs(), [2, 3]);
  });
});

describe('thread-event bus watches a thread while someone listens', () => {
  const conn = (id: string): Peer => ({ id, trusted: false, notify: () => {} });

  test('the last subscriber of a thread leaving releases its watch; other threads and users stay watched', async () => {
    const s = scripted(0);
    s.position();
    const bus = new ThreadEventBus(s.source);
    const subs = new SubscriptionRegistry(bus);
    subs.subscribe('ann', 't', conn('c1'), 's1');
    subs.subscribe('ann', 't', conn('c2'), 's2');
    subs.subscribe('ann', 't', conn('c2'), 's3');
    subs.subscribe('bob', 't', conn('c2'), 's4');
    assert.deepEqual(s.calls, ['watch ann/t', 'watch bob/t'], 'one watch per thread');
    subs.unsubscribe('ann', 't', 'c2', 's2');
    subs.dropConnection('c1');
    assert.deepEqual(s.calls.filter((x) => x.startsWith('unwatch')), [], 'c2 still listens through s3');
    subs.unsubscribe('ann', 't', 'c2', 's3');
    assert.deepEqual(s.calls.filter((x) => x.startsWith('unwatch')), ['unwatch ann/t']);
    assert.equal(bus.watchedThreads(), 1);
    subs.dropConnection('c2');
    assert.deepEqual(s.calls.filter((x) => x.startsWith('unwatch')), ['unwatch ann/t', 'unwatch bob/t']);
    assert.equal(bus.watchedThreads(), 0);
    // Listening again watches again, from a fresh position.
    subs.subscribe('ann', 't', conn('c3'), 's5');
    assert.equal(s.calls.filter((x) => x === 'watch ann/t').length, 2);
  });

  test('a re-watch that resolves after its listener left and a new one joined leaves the new watch alone', async (t) => {
    // The bus retries a failed watch on an unref'd timer: while the test waits for it, a ref'd one keeps the
    // process alive. In a process with nothing else open (the PostgreSQL pass's group, between suites) the
    // event loop emptied there and node:test cancelled the rest of the group.
    const alive = setInterval(() => {}, 1000);
    t.after(() => clearInterval(alive));
    // Watch 1 fails (the database is down), the retry (watch 2) hangs; watch 3 is the new listener's.
    const calls: string[] = [];
    const watches: Array<{ resolve: (position: number) => void; reject: (err: Error) => void; done: Promise<number> }> = [];
    const asked: Array<() => void> = [];
    const source: ThreadEventSource = {
      watch: () => {
        calls.push('watch');
        let resolve!: (position: number) => void;
        let reject!: (err: Error) => void;
        const done = new Promise<number>((res, rej) => ((resolve = res), (reject = rej)));
        watches.push({ resolve, reject, done });
        for (const a of asked.splice(0)) a();
        return done;
      },
      unwatch: () => void calls.push('unwatch'),
      between: async () => [],
    };
    const nthWatch = async (n: number) => {
      while (watches.length < n) await new Promise<void>((r) => asked.push(r));
      return watches[n - 1]!;
    };
    const bus = new ThreadEventBus(source, 1);
    const first = bus.listen('ann', 't', () => {});
    (await nthWatch(1)).reject(new Error('database unreachable'));
    await bus.ready('ann', 't');
    const retry = await nthWatch(2);
    first();
    const second = collect(bus);
    const renewed = await nthWatch(3);
    renewed.resolve(0);
    await bus.ready('ann', 't');
    retry.resolve(0);
    await retry.done; // the bus's own callback on the retry ran first
    assert.deepEqual(calls, ['watch', 'watch', 'unwatch', 'watch'], 'the stale retry unwatched nothing: the new listener is still heard');
    second.stop();
    assert.deepEqual(calls.slice(4), ['unwatch'], 'the new listener leaving releases its watch');
  });
});

describe('thread-event bus on PostgreSQL: a local call and another daemon’s call interleave', needsPg, () => {
  after(dropAllFreshDatabases);

  for (const arrival of ['late', 'never'] as const) {
    test(`another daemon’s NOTIFY held back (${arrival === 'late' ? 'arrives after the local event' : 'stuck until the bus reads the store'}): the subscriber still sees thread order, once`, { timeout: 30_000 }, async () => {
      const db = await freshPgDatabase();
      const silent = { log: () => {} };
      const [a, b] = await Promise.all([openPgStore(db.url, { log: silent }), openPgStore(db.url, { log: silent })]);
      // Daemon A's feed, its reads gated: the notification of B's commit is delayed (or dropped).
      let open!: () => void;
      const gate = new Promise<void>((r) => (open = r));
      const bus = new ThreadEventBus();
      const direct = storeEventSource(a);
      const feed = new PgThreadFeed(
        db.url,
        {
          messagesAfter: async (ref, after, upTo) => {
            await gate;
            return direct.between(ref.userId, ref.threadId, after, upTo + 1);
          },
          lastSeq: async (ref) => direct.watch(ref.userId, ref.threadId),
          threadOf: async () => undefined,
        },
        (ref, rows) => rows.forEach((r) => bus.publish({ userId: ref.userId, threadId: ref.threadId, row: r })),
        silent,
      );
      await feed.start();
      bus.useSource({ watch: (u, t) => feed.watch({ userId: u, threadId: t }), unwatch: (u, t) => feed.unwatch({ userId: u, threadId: t }), between: direct.between });
      try {
        await b.transaction((tx) => tx.users.ensure('alice'));
        const insert = (store: typeof a, content: string) =>
          store.transaction((tx) => tx.messages.insert({ userId: 'alice', threadId: 't', role: 'user', content, metadataJson: '{}' }));
        await insert(b, 'before');
        const c = collect(bus, 'alice', 't');
        await bus.ready('alice', 't');
        const fromB = await insert(b, 'from B'); // seq 2: reaches A only through the (held) feed
        const fromA = await insert(a, 'from A'); // seq 3: A's own call, published at once
        bus.publish({ userId: 'alice', threadId: 't', row: fromA, origin: 'conn-a' });
        if (arrival === 'late') {
          assert.deepEqual(c.seqs(), [], 'A’s call waits for B’s');
          open();
        }
        await c.until(2);
        open();
        assert.deepEqual(c.seen.map((e) => [e.row.thread_seq, e.row.content]), [[fromB.thread_seq, 'from B'], [fromA.thread_seq, 'from A']]);
        assert.equal(c.seen[1]!.origin, 'conn-a');
        // Whatever the feed still brings is a repeat: dropped. The feed reads the thread in commit order, so
        // a repeat it would bring reaches the bus before a later commit's message (the barrier).
        await insert(b, 'after');
        await c.until(3);
        await insert(b, 'barrier');
        await c.until(4);
        assert.deepEqual(c.seqs(), [2, 3, 4, 5]);
        c.stop();
        assert.equal(feed.watchedThreads(), 0, 'the last listener left: the feed no longer reads the thread');
      } finally {
        await feed.close();
        await Promise.all([a.close(), b.close()]);
      }
    });
  }
});

describe('thread-event bus after a failed watch', { timeout: 20_000 }, () => {
  test('the watch is asked for again while someone listens, and what was stored meanwhile is delivered in order', async () => {
    const calls: string[] = [];
    let attempts = 0;
    let watched: () => void = () => {};
    const rewatched = new Promise<void>((r) => (watched = r));
    const stored = [row(1), row(2), row(3)];
    const source: ThreadEventSource = {
      async watch(u, t) {
        calls.push(`watch ${u}/${t}`);
        // The database is unreachable the first time.
        if (++attempts === 1) throw new Error('connection refused');
        watched();
        return 3;
      },
      unwatch: (u, t) => void calls.push(`unwatch ${u}/${t}`),
      async between(_u, _t, after, before) {
        calls.push(`between ${after}..${before}`);
        return stored.filter((r) => r.thread_seq > after && r.thread_seq < before);
      },
    };
    const bus = new ThreadEventBus(source, 10);
    // The retry's timer does not hold a process open (unref): this test does, while it waits.
    const keepAlive = setInterval(() => {}, 1000);
    try {
      const c = collect(bus);
      await bus.ready('ann', 't');
      // This daemon's own message 1 sets the position; 2 and 3 come from another daemon
      // while the thread is unwatched, so only the retried watch (and the store) brings them.
      bus.publish({ userId: 'ann', threadId: 't', row: row(1) });
      await rewatched;
      await c.until(3);
      assert.deepEqual(c.seqs(), [1, 2, 3]);
      assert.deepEqual(calls.slice(0, 3), ['watch ann/t', 'watch ann/t', 'between 1..4']);
      c.stop();
      assert.equal(calls.at(-1), 'unwatch ann/t');
    } finally {
      clearInterval(keepAlive);
    }
  });
});
