/**
 * AG-UI over Server-Sent Events: `GET /threads/{id}/events` on the `--ws`
 * server, read with fetch as a front end would. First against the real
 * daemon, then in process for what a spawned daemon hides (pings, cleanup).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { EventType } from '@ag-ui/core';
import { EventSchemas } from '@ag-ui/core/schemas';
import { startHost, openSession, type Host } from '../helpers/host.js';
import { mintBearer, TEST_BEARER_SECRET } from '../helpers/tokens.js';
import { tempDir } from '../helpers/repo.js';
import { createHttpServer } from '../../src/daemon/http-server.js';
import { agUiStreamRoute, ThreadListeners } from '../../src/daemon/ag-ui-stream.js';
import type { Daemon } from '../../src/daemon/daemon.js';
import { createLogger } from '../../src/daemon/logger.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { MessageRow } from '../../src/store/store.js';
import { buildToolAgentOutput, projectText } from '../../src/codec/tool-output.js';
import { deriveUiHints } from '../../src/codec/ui-hints.js';
import type { ToolResponse } from '../../src/protocol/index.js';


interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

interface SseStream {
  status: number;
  headers: Headers;
  /** The next frame; comments (`: ping`) only with `comments: true`. Fails after 10 s. */
  next(opts?: { comments?: boolean }): Promise<SseFrame>;
  take(n: number): Promise<SseFrame[]>;
  /** Resolves true if no frame arrives within `ms`. */
  quiet(ms: number): Promise<boolean>;
  close(): void;
}

interface AgUiJson {
  type: string;
  toolCallId: string;
  toolCallName?: string;
  delta?: string;
  messageId?: string;
  content?: string;
  role?: string;
  timestamp?: number;
  ui_schema?: unknown;
}

/** Opens the stream with fetch and parses Server-Sent Events frames off its body. */
async function openSse(base: string, path: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const abort = new AbortController();
  const res = await fetch(`${base}${path}`, { headers, signal: abort.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const frames: SseFrame[] = [];
  let ended = false;

  const pump = async (): Promise<void> => {
    const { done, value } = await reader.read();
    if (done) {
      ended = true;
      return;
    }
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const frame: SseFrame = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) frame.comment = line.slice(1).trim();
        else {
          const colon = line.indexOf(':');
          const field = line.slice(0, colon);
          const value = line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id' || field === 'event' || field === 'data') frame[field] = value;
        }
      }
      frames.push(frame);
    }
  };

  // One read at a time; a caller that stops waiting leaves it to the next caller.
  let reading: Promise<void> | null = null;
  const readMore = (ms: number) => {
    reading ??= pump().finally(() => (reading = null));
    return Promise.race([reading, new Promise((r) => setTimeout(r, ms).unref())]);
  };
  const isEvent = (f: SseFrame) => f.comment === undefined;

  const next = async (opts: { comments?: boolean } = {}): Promise<SseFrame> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const i = frames.findIndex((f) => opts.comments || isEvent(f));
      if (i >= 0) return frames.splice(0, i + 1).pop()!;
      if (ended) throw new Error('stream ended');
      if (Date.now() > deadline) throw new Error('no frame in time');
      await readMore(deadline - Date.now());
    }
  };

  return {
    status: res.status,
    headers: res.headers,
    next,
    async take(n) {
      const out: SseFrame[] = [];
      for (let i = 0; i < n; i++) out.push(await next());
      return out;
    },
    async quiet(ms) {
      const deadline = Date.now() + ms;
      while (!ended && Date.now() < deadline && !frames.some(isEvent)) await readMore(deadline - Date.now());
      return !frames.some(isEvent);
    },
    close() {
      abort.abort();
      reader.cancel().catch(() => {});
    },
  };
}

const json = (f: SseFrame): AgUiJson => JSON.parse(f.data!) as AgUiJson;

const createArgs = (title: string) => ({
  module: 'calendar',
  method: 'create',
  input: { title, start_at: '2026-03-03T09:00:00Z', end_at: '2026-03-03T10:00:00Z' },
});

describe('AG-UI event stream on the --ws server', () => {
  let host: Host;
  let base: string;
  let aliceToken: string;
  let bobToken: string;
  let session: string;
  const badTokens: string[] = [];

  const invoke = (threadId: string, toolCallId: string, title: string) =>
    host.request<ToolResponse>('tool/invoke', { session_id: session, thread_id: threadId, tool_call_id: toolCallId, args: createArgs(title) });
  const auth = (token: string) => ({ authorization: `Bearer ${token}` });

  before(async () => {
    host = await startHost({ transport: 'ws' });
    base = `http://127.0.0.1:${host.port!}`;
    aliceToken = await mintBearer('alice');
    bobToken = await mintBearer('bob');
    session = (await openSession(host, aliceToken)).session_id;
    await openSession(await host.connect(), bobToken);
  });
  after(async () => {
    await host.stop();
  });

  test('replays the thread’s calls as START, ARGS, END, RESULT, then pushes new calls live', async () => {
    const first = await invoke('agui-1', 'c1', 'Standup');
    assert.equal(first.status, 'success');

    const sse = await openSse(base, '/threads/agui-1/events', auth(aliceToken));
    try {
      assert.equal(sse.status, 200);
      assert.match(sse.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.equal(sse.headers.get('cache-control'), 'no-cache');

      const replayed = await sse.take(4);
      const events = replayed.map(json);
      assert.deepEqual(replayed.map((f) => f.event), ['TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_RESULT']);
      assert.deepEqual(events.map((e) => e.type), replayed.map((f) => f.event));
      for (const e of events) assert.ok(EventSchemas.safeParse(e).success, e.type);
      assert.ok(events.every((e) => e.toolCallId === 'c1'));
      assert.equal(events[0]!.toolCallName, 'project_cli');
      assert.deepEqual(JSON.parse(events[1]!.delta!), createArgs('Standup'));
      const result = events[3]!;
      assert.equal(result.content, first.content[0]!.text, 'RESULT.content is the tool/invoke text, byte for byte');
      assert.equal(result.role, 'tool');
      assert.deepEqual(replayed.map((f) => f.id), [0, 1, 2, 3].map((i) => `${result.messageId}:${i}`));

      const live = host.wire.find(
        (w) => w.method === 'tool/result' && (w.payload as { tool_call_id: string; final: boolean }).tool_call_id === 'c1',
      )!.payload as { ui_schema?: unknown };
      assert.ok(live.ui_schema);
      assert.deepEqual(result.ui_schema, live.ui_schema, 'the same ui_schema the live notification carried');
      assert.ok(!replayed.some((f) => f.data!.includes('ui_hints')));

      const history = await host.request<{ messages: Array<{ id: string; role: string; content: string }> }>('history/get', {
        session_id: session, thread_id: 'agui-1', view: 'context',
      });
      const stored = history.messages.find((m) => m.role === 'tool')!;
      assert.equal(stored.id, result.messageId);
      assert.equal(stored.content, result.content);

      const second = await invoke('agui-1', 'c2', 'Retro');
      const pushed = await sse.take(4);
      assert.deepEqual(pushed.map((f) => json(f).type), [EventType.TOOL_CALL_START, EventType.TOOL_CALL_ARGS, EventType.TOOL_CALL_END, EventType.TOOL_CALL_RESULT]);
      assert.ok(pushed.every((f) => json(f).toolCallId === 'c2'));
      assert.equal(json(pushed[3]!).content, second.content[0]!.text);
      assert.ok(json(pushed[3]!).ui_schema);

      // Answering a stored call again stores nothing new, so nothing is pushed.
      const again = await invoke('agui-1', 'c1', 'Standup');
      assert.equal(again.content[0]!.text, first.content[0]!.text);
      assert.ok(await sse.quiet(300));
    } finally {
      sse.close();
    }
  });

  test('Last-Event-ID resumes after the last event received; ?replay=0 skips the history', async () => {
    const first = await openSse(base, '/threads/agui-1/events', auth(aliceToken));
    const all = await first.take(8);
    first.close();

    const resumed = await openSse(base, '/threads/agui-1/events?replay=0', { ...auth(aliceToken), 'last-event-id': all[1]!.id! });
    try {
      assert.deepEqual((await resumed.take(6)).map((f) => f.id), all.slice(2).map((f) => f.id));
      assert.ok(await resumed.quiet(200));
    } finally {
      resumed.close();
    }

    const fresh = await openSse(base, '/threads/agui-1/events?replay=0', auth(aliceToken));
    try {
      assert.equal(fresh.status, 200);
      assert.ok(await fresh.quiet(200), 'no history');
      await invoke('agui-1', 'c3', 'Planning');
      const start = json(await fresh.next());
      assert.equal(start.type, 'TOOL_CALL_START');
      assert.equal(start.toolCallId, 'c3');
    } finally {
      fresh.close();
    }
  });

  test('without a valid bearer token: 401 with WWW-Authenticate, never echoing the token', async () => {
    badTokens.push(
      'not-a-jwt',
      await mintBearer('alice', {}, { secret: 'another-secret-0123456789abcdefgh' }),
      await mintBearer('alice', {}, { expiresIn: Math.floor(Date.now() / 1000) - 60 }),
    );
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: `Basic ${Buffer.from('alice:pw').toString('base64')}` },
      { authorization: 'Bearer' },
      ...badTokens.map(auth),
    ];
    for (const headers of attempts) {
      const res = await fetch(`${base}/threads/agui-1/events`, { headers });
      const body = await res.text();
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer\b/);
      assert.equal(typeof (JSON.parse(body) as { error: unknown }).error, 'string');
      for (const t of badTokens) assert.ok(!body.includes(t));
    }
  });

  test('another user’s thread and a thread that never existed are the same 404', async () => {
    const probe = async (token: string, threadPath: string) => {
      const res = await fetch(`${base}/threads/${threadPath}/events`, { headers: auth(token) });
      return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
    };
    const foreign = await probe(bobToken, 'agui-1');
    const never = await probe(bobToken, 'never-was');
    const tooLong = await probe(aliceToken, 'x'.repeat(201));
    const badEscape = await probe(aliceToken, '%E0%A4%A');
    assert.equal(foreign.status, 404);
    assert.deepEqual(never, foreign);
    assert.deepEqual(tooLong, foreign);
    assert.deepEqual(badEscape, foreign);
    assert.deepEqual(JSON.parse(foreign.body), { error: 'thread not found' });

    const post = await fetch(`${base}/threads/agui-1/events`, { method: 'POST', headers: auth(aliceToken) });
    assert.equal(post.status, 405);
    await post.text();
  });

  test('the daemon logs streams opening and closing, and never a token', async () => {
    await new Promise((r) => setTimeout(r, 200));
    const stderr = host.stderr();
    assert.match(stderr, /"msg":"ag-ui stream opened"/);
    assert.match(stderr, /"msg":"ag-ui stream closed"/);
    for (const t of [aliceToken, bobToken, ...badTokens]) assert.ok(!stderr.includes(t));
  });
});

describe('AG-UI event stream, in process', () => {
  let server: Server;
  let base: string;
  let daemon: Daemon;
  let row: MessageRow;
  let token: string;

  before(async () => {
    const store = openSqliteStore(join(tempDir(), 'toolgate.db'));
    daemon = {
      store,
      log: createLogger(() => {}),
      env: {},
      bearerKeys: { kind: 'secret', secret: new TextEncoder().encode(TEST_BEARER_SECRET), origin: 'env' },
      threadListeners: new ThreadListeners(),
    } as unknown as Daemon;
    await store.transaction((tx) => tx.users.ensure('erin'));
    const args = createArgs('Stored');
    const output = buildToolAgentOutput(
      { ok: true, module: 'calendar', method: 'create', data: { event: { id: 'evt_1', owner_id: 'erin', title: 'Stored', start_at: args.input.start_at, end_at: args.input.end_at } } },
      args,
      'k1',
      deriveUiHints,
    );
    row = await store.transaction((tx) =>
      tx.messages.insert({ userId: 'erin', threadId: 'quiet', role: 'tool', content: projectText(output), metadataJson: JSON.stringify({ tool_agent_output: output }), toolCallId: 'k1', status: output.status }),
    );
    token = await mintBearer('erin');
    server = createHttpServer(daemon, [agUiStreamRoute(daemon, { pingIntervalMs: 50 })]);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await daemon.store.close();
  });

  test('pings an idle stream, and drops its listener when the client goes away', async () => {
    const sse = await openSse(base, '/threads/quiet/events', { authorization: `Bearer ${token}` });
    assert.equal(sse.status, 200);
    const replayed = await sse.take(4);
    assert.equal(json(replayed[3]!).timestamp, Date.parse(row.created_at));
    assert.equal((await sse.next({ comments: true })).comment, 'ping');
    assert.equal(daemon.threadListeners.count('erin', 'quiet'), 1);

    daemon.threadListeners.publish(row);
    assert.deepEqual((await sse.take(4)).map((f) => f.data), replayed.map((f) => f.data), 'live and replayed are the same bytes');

    sse.close();
    const deadline = Date.now() + 5_000;
    while (daemon.threadListeners.count() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(daemon.threadListeners.count(), 0);
  });

  test('a Last-Event-ID from elsewhere replays everything', async () => {
    const sse = await openSse(base, '/threads/quiet/events', { authorization: `Bearer ${token}`, 'last-event-id': 'msg_unknown:2' });
    try {
      assert.deepEqual((await sse.take(4)).map((f) => f.id), [0, 1, 2, 3].map((i) => `${row.id}:${i}`));
    } finally {
      sse.close();
    }
  });

  test('a listener that throws does not stop the others', () => {
    const listeners = new ThreadListeners();
    const seen: string[] = [];
    listeners.listen('erin', 't', () => {
      throw new Error('broken stream');
    });
    const stop = listeners.listen('erin', 't', (r) => seen.push(r.id));
    listeners.publish({ ...row, thread_id: 't' });
    listeners.publish({ ...row, thread_id: 'other' });
    listeners.publish({ ...row, user_id: 'mallory', thread_id: 't' });
    assert.deepEqual(seen, [row.id], 'only the listener of erin’s thread t hears it');
    stop();
    stop();
    assert.equal(listeners.count('erin', 't'), 1);
  });
});
