/**
 * The caller subscribed to its own thread hears its call exactly once, however
 * its publish and its subscription interleave: when the call's publish reaches
 * the thread-event bus after the store's copy of the same message did (the bus
 * filled a gap from the store first: another daemon's later message came, and
 * this one's publish was late), and when the subscription's position, read
 * after the commit but before the publish, already counts the call (so the bus
 * sends it to nobody). In process: the daemon's dispatcher and in-process
 * executor behind the real stdio transport over an in-memory duplex pair,
 * spoken to by toolgate/client.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { createDaemon } from '../../../src/app/serve.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { serveStdio } from '../../../src/rpc/stdio-transport.js';
import { serveContext } from '../../../src/rpc/serve-context.js';
import { ToolgateClient } from '../../../src/client/index.js';
import type { ToolResultNotification } from '../../../src/protocol/index.js';
import type { StoredMessageEvent } from '../../../src/threads/thread-events.js';
import { tempDir } from '../../helpers/repo.js';
import { TEST_BEARER_SECRET, mintBearer } from '../../helpers/tokens.js';

async function inProcess() {
  const services = await createDaemon(
    { transport: 'stdio', db: join(tempDir(), 'toolgate.db'), dev: false, executor: 'inprocess', env: { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET } },
    createLogger(() => {}, 'warn'),
  );
  const toDaemon = new PassThrough();
  const fromDaemon = new PassThrough();
  const served = serveStdio(serveContext(services, { limits: { maxInFlight: 64 } }), toDaemon, fromDaemon);
  const client = ToolgateClient.fromStreams(fromDaemon, toDaemon);
  const heard: ToolResultNotification[] = [];
  client.onToolResult((n) => heard.push(n));
  await client.initialize();
  const session = await client.openSession({ token: await mintBearer('late-alice') });
  const byCall = (id: string) => heard.filter((n) => n.tool_call_id === id).map((n) => `${n.status}${n.final ? ' final' : ''}`);
  const heardOrder = () => heard.map((n) => n.tool_call_id);
  const close = async () => {
    await client.close();
    served.close();
    await services.store.close();
  };
  return { services, session, byCall, heardOrder, close };
}

test('a subscribed caller whose position read already counts its call (commit, subscribe, then publish) still gets it, once', async () => {
  const { services, session, byCall, close } = await inProcess();
  try {
    // The commit's answer comes late (as a PostgreSQL pool's can): the caller subscribes in between.
    const store = services.store;
    const transaction = store.transaction.bind(store);
    let committed!: () => void;
    const isCommitted = new Promise<void>((r) => (committed = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    store.transaction = (async (work: Parameters<typeof transaction>[0]) => {
      const value = await transaction(work);
      committed();
      await released;
      return value;
    }) as typeof store.transaction;
    const call = session.invoke('counted', 'c0', { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } });
    await isCommitted;
    await session.subscribe('counted');
    release();
    assert.equal((await call).status, 'success');
    assert.deepEqual(byCall('c0'), ['success final'], 'one notification, not none');
  } finally {
    await close();
  }
});

test('a caller subscribed to its thread gets its tool/result once when its publish comes after the store’s copy', async () => {
  const { services, session, byCall, close } = await inProcess();
  // The late interleaving, made certain: every local publish is preceded by the store's copy (no origin).
  const bus = services.threadEvents;
  const publish = bus.publish.bind(bus);
  let late = 0;
  bus.publish = (event: StoredMessageEvent) => {
    if (event.origin !== undefined) {
      publish({ userId: event.userId, threadId: event.threadId, row: event.row });
      late++;
    }
    publish(event);
  };
  try {
    // The thread's position is read by subscribing (its first message comes next).
    await session.subscribe('late');
    for (const [i, args] of [
      { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } },
      { module: 'calendar', method: 'create', input: { items: [
        { title: 'A', start_at: '2026-01-01T10:00:00Z', end_at: '2026-01-01T11:00:00Z' },
        { title: 'B', start_at: '2026-01-01T12:00:00Z', end_at: '2026-01-01T13:00:00Z' },
      ] } },
    ].entries()) {
      const r = await session.invoke('late', `c${i}`, args as never);
      assert.equal(r.status, 'success');
    }
    assert.equal(late, 2, 'both calls were published late');
    assert.deepEqual(byCall('c0'), ['success final'], 'one notification, not two');
    assert.deepEqual(byCall('c1'), ['partial', 'partial', 'success final'], 'each partial once, then the final one');
  } finally {
    await close();
  }
});

test('a caller that unsubscribes between the store’s copy and its own publish gets its tool/result once', async () => {
  const { services, session, byCall, close } = await inProcess();
  // The store's copy reaches the subscription; the caller unsubscribes; then the call's own publish comes.
  const bus = services.threadEvents;
  const publish = bus.publish.bind(bus);
  let unsubscribed = 0;
  bus.publish = (event: StoredMessageEvent) => {
    if (event.origin !== undefined) {
      publish({ userId: event.userId, threadId: event.threadId, row: event.row });
      if (services.subscriptions.unsubscribe(event.userId, event.threadId, event.origin, session.id)) unsubscribed++;
    }
    publish(event);
  };
  try {
    await session.subscribe('between');
    const r = await session.invoke('between', 'c0', { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } });
    assert.equal(r.status, 'success');
    assert.equal(unsubscribed, 1, 'the caller unsubscribed in between');
    assert.deepEqual(byCall('c0'), ['success final'], 'one notification, not two');
  } finally {
    await close();
  }
});

/** The daemon's next transaction commits, then its answer waits for `release` (later ones go through). */
function holdFirstCommit(services: Awaited<ReturnType<typeof inProcess>>['services']) {
  const store = services.store;
  const transaction = store.transaction.bind(store);
  let committed!: (value: unknown) => void;
  const isCommitted = new Promise<unknown>((r) => (committed = r));
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let first = true;
  store.transaction = (async (work: Parameters<typeof transaction>[0]) => {
    const hold = first;
    first = false;
    const value = await transaction(work);
    if (hold) {
      committed(value);
      await released;
    }
    return value;
  }) as typeof store.transaction;
  return { isCommitted, release };
}

test('an unsubscribed caller whose two calls on a thread settle out of seq order gets each tool/result once', async () => {
  const { services, session, byCall, close } = await inProcess();
  try {
    // The connection watched the thread once (it keeps its position there), then stopped.
    await session.subscribe('unordered');
    await session.unsubscribe('unordered');
    // The first call's commit answers late (each PostgreSQL COMMIT returns on its own pooled connection):
    // the second call, a higher seq, is published, settled and answered first.
    const { isCommitted, release } = holdFirstCommit(services);
    const bus = services.threadEvents;
    const publish = bus.publish.bind(bus);
    const published: number[] = [];
    bus.publish = (event: StoredMessageEvent) => {
      if (event.origin !== undefined) published.push(event.row.thread_seq);
      publish(event);
    };
    const early = session.invoke('unordered', 'c0', { module: 'memory', method: 'update', input: { key: 'k0', content: 'v' } });
    await isCommitted;
    const later = await session.invoke('unordered', 'c1', { module: 'memory', method: 'update', input: { key: 'k1', content: 'v' } });
    assert.equal(later.status, 'success');
    release();
    assert.equal((await early).status, 'success');
    assert.deepEqual(published, [2, 1], 'the call answered last holds the lower seq');
    assert.deepEqual(byCall('c1'), ['success final']);
    assert.deepEqual(byCall('c0'), ['success final'], 'the lower seq, settled last, is notified too');
  } finally {
    await close();
  }
});

test('a caller that subscribed after its commit, then heard a later call, still gets its own call once', async () => {
  const { services, session, byCall, close } = await inProcess();
  try {
    // The first call's commit answers late; meanwhile the caller subscribes (its position counts the
    // call) and a later call of the thread reaches its subscription (its cursor passes the first).
    const { isCommitted, release } = holdFirstCommit(services);
    const early = session.invoke('counted-later', 'c0', { module: 'memory', method: 'update', input: { key: 'k0', content: 'v' } });
    await isCommitted;
    await session.subscribe('counted-later');
    const later = await session.invoke('counted-later', 'c1', { module: 'memory', method: 'update', input: { key: 'k1', content: 'v' } });
    assert.equal(later.status, 'success');
    assert.deepEqual(byCall('c1'), ['success final'], 'the later call once, through the subscription');
    release();
    assert.equal((await early).status, 'success');
    assert.deepEqual(byCall('c0'), ['success final'], 'one notification, not none');
  } finally {
    await close();
  }
});

test('a subscribed caller whose store copy reached its subscription before its commit answered gets it once', async () => {
  const { services, session, byCall, close } = await inProcess();
  try {
    await session.subscribe('feed-first');
    // On PostgreSQL the feed can read the committed row back, and the bus send it, before the
    // caller's COMMIT returns: the copy goes out first, then the call's own publish comes.
    const { isCommitted, release } = holdFirstCommit(services);
    const call = session.invoke('feed-first', 'c0', { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } });
    const { row } = (await isCommitted) as { row: StoredMessageEvent['row'] };
    services.threadEvents.publish({ userId: row.user_id, threadId: row.thread_id, row });
    release();
    assert.equal((await call).status, 'success');
    assert.deepEqual(byCall('c0'), ['success final'], 'one notification, not two');
  } finally {
    await close();
  }
});

test('a caller that resubscribes while a late copy of its answered call arrives is not sent it again', async () => {
  const { services, session, byCall, close } = await inProcess();
  try {
    // The connection watched the thread once, then stopped: the thread has no listener left.
    await session.subscribe('resub');
    await session.unsubscribe('resub');
    const bus = services.threadEvents;
    const publish = bus.publish.bind(bus);
    let own: StoredMessageEvent | undefined;
    bus.publish = (event: StoredMessageEvent) => {
      if (event.origin !== undefined) own = event;
      publish(event);
    };
    // Unsubscribed, the caller is sent its call directly.
    assert.equal((await session.invoke('resub', 'c0', { module: 'memory', method: 'update', input: { key: 'k0', content: 'v' } })).status, 'success');
    assert.deepEqual(byCall('c0'), ['success final']);
    // It subscribes again, the thread's first listener: while the bus reads the thread's position, a late
    // copy of that call comes in without a caller (on PostgreSQL, the feed's NOTIFY of this daemon's commit).
    const store = services.store;
    const read = store.read.bind(store);
    let copies = 0;
    store.read = (async (work: Parameters<typeof read>[0]) => {
      const value = await read(work);
      if (own && copies++ === 0) publish({ userId: own.userId, threadId: own.threadId, row: own.row });
      return value;
    }) as typeof store.read;
    await session.subscribe('resub');
    store.read = read;
    assert.equal(copies, 1, 'the copy came while the position was read');
    // A later call through the subscription: everything sent before it has reached the client.
    assert.equal((await session.invoke('resub', 'c1', { module: 'memory', method: 'update', input: { key: 'k1', content: 'v' } })).status, 'success');
    assert.deepEqual(byCall('c1'), ['success final']);
    assert.deepEqual(byCall('c0'), ['success final'], 'one notification, not two');
  } finally {
    await close();
  }
});

test('a subscribed caller hears its own calls in the thread’s order, and nothing of them is kept after the answers', async () => {
  const { services, session, heardOrder, close } = await inProcess();
  try {
    await session.subscribe('in-order');
    // The first call (seq 1) commits, but its answer comes late: the second call (seq 2) is published first.
    const { isCommitted, release } = holdFirstCommit(services);
    const early = session.invoke('in-order', 'c0', { module: 'memory', method: 'update', input: { key: 'k0', content: 'v' } });
    await isCommitted;
    const later = await session.invoke('in-order', 'c1', { module: 'memory', method: 'update', input: { key: 'k1', content: 'v' } });
    assert.equal(later.status, 'success');
    release();
    assert.equal((await early).status, 'success');
    assert.deepEqual(heardOrder(), ['c0', 'c1'], 'seq 1 before seq 2, each once, though seq 2 was answered first');
    assert.equal(services.subscriptions.callsInFlight(), 0, 'no call is remembered once answered');
  } finally {
    await close();
  }
});
