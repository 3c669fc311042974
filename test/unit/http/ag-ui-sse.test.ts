/**
 * AG-UI over Server-Sent Events: `GET /threads/{id}/events` on the `--ws`
 * server. First the raw stream as fetch reads it, then the same stream fed
 * through the official AG-UI client (`@ag-ui/client`: its transport, event
 * enforcement, verifier and message reducer) as a front end consumes it,
 * then with the stream's route on a server of its own, for what the
 * daemon's listener hides (pings every 50 ms, cleanup, the bus). The daemon
 * runs in this process on the binary's own listener (test/helpers/in-process.ts).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { EventSchemas } from '@ag-ui/core/schemas';
import { openSession } from '../../helpers/host.js';
import { startInProcess, type InProcessHost } from '../../helpers/in-process.js';
import { mintBearer, TEST_BEARER_SECRET } from '../../helpers/tokens.js';
import { tempDir } from '../../helpers/repo.js';
import { follow, ThreadFollower, verifySse } from '../../helpers/ag-ui-client.js';
import { createHttpServer } from '../../../src/http/http-server.js';
import { agUiStreamRoute } from '../../../src/http/ag-ui-stream.js';
import { SessionRegistry } from '../../../src/sessions/sessions.js';
import { serveContext } from '../../../src/rpc/serve-context.js';
import { ThreadEventBus } from '../../../src/threads/thread-events.js';
import { ApprovalWaiters } from '../../../src/calls/approval-waiters.js';
import type { Services } from '../../../src/rpc/services.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { MessageRow } from '../../../src/store/store.js';
import { buildToolAgentOutput, projectText } from '../../../src/codec/tool-output.js';
import { deriveUiHints } from '../../../src/codec/ui-hints.js';
import type { HistoryMessage, ToolResponse } from '../../../src/protocol/index.js';
import { waitFor } from '../../helpers/wait-for.js';



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
  /** Frames up to and including the `n`th RUN_FINISHED. */
  runs(n: number): Promise<SseFrame[]>;
  close(): void;
}

interface AgUiJson {
  type: string;
  threadId?: string;
  runId?: string;
  toolCallId?: string;
  toolCallName?: string;
  delta?: string;
  messageId?: string;
  content?: string;
  role?: string;
  timestamp?: number;
  ui_schema?: unknown;
  metadata?: { ui_schema?: unknown };
}

/** Splits complete SSE frames off the front of `buffer`; returns the frames and what is left. */
function parseFrames(buffer: string): { frames: SseFrame[]; rest: string } {
  const frames: SseFrame[] = [];
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
  return { frames, rest: buffer };
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
    const parsed = parseFrames(buffer + decoder.decode(value, { stream: true }));
    buffer = parsed.rest;
    frames.push(...parsed.frames);
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
    async runs(n) {
      const out: SseFrame[] = [];
      while (out.filter((f) => f.event === 'RUN_FINISHED').length < n) out.push(await next());
      return out;
    },
    close() {
      abort.abort();
      reader.cancel().catch(() => {});
    },
  };
}

const json = (f: SseFrame): AgUiJson => JSON.parse(f.data!) as AgUiJson;

/** The frames of each run, split at RUN_FINISHED. */
function runsOf(frames: SseFrame[]): SseFrame[][] {
  const runs: SseFrame[][] = [[]];
  for (const f of frames) {
    runs.at(-1)!.push(f);
    if (f.event === 'RUN_FINISHED') runs.push([]);
  }
  return runs.filter((r) => r.length > 0);
}

/** The stored message a run encodes: the id on its TEXT_MESSAGE_START or TOOL_CALL_RESULT. */
function messageIdOfRun(run: SseFrame[]): string | undefined {
  const f = run.find((x) => x.event === 'TEXT_MESSAGE_START' || x.event === 'TOOL_CALL_RESULT');
  return f ? json(f).messageId : undefined;
}

const createArgs = (title: string) => ({
  module: 'calendar',
  method: 'create',
  input: { title, start_at: '2026-03-03T09:00:00Z', end_at: '2026-03-03T10:00:00Z' },
});

const TEXT_TYPES = new Set(['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END']);

describe('AG-UI event stream on the --ws server', () => {
  let host: InProcessHost;
  let base: string;
  let aliceToken: string;
  let bobToken: string;
  let session: string;
  const badTokens: string[] = [];

  const invoke = (threadId: string, toolCallId: string, title: string) =>
    host.request<ToolResponse>('tool/invoke', { session_id: session, thread_id: threadId, tool_call_id: toolCallId, args: createArgs(title) });
  const append = (threadId: string, role: 'user' | 'assistant', content: string, extra: Record<string, unknown> = {}) =>
    host.request<{ id: string }>('message/append', { session_id: session, thread_id: threadId, role, content, ...extra });
  const history = async (threadId: string, view: 'ui' | 'context') =>
    (await host.request<{ messages: HistoryMessage[] }>('history/get', { session_id: session, thread_id: threadId, view })).messages;
  const liveUi = (toolCallId: string) =>
    (host.wire.find((w) => {
      const n = w.payload as { tool_call_id?: string; final?: boolean };
      return w.method === 'tool/result' && n.tool_call_id === toolCallId && n.final === true;
    })!.payload as { ui_schema?: unknown }).ui_schema;
  const auth = (token: string) => ({ authorization: `Bearer ${token}` });

  before(async () => {
    host = await startInProcess({ executor: 'subprocess', transport: 'ws' });
    base = `http://127.0.0.1:${host.port!}`;
    aliceToken = await mintBearer('alice');
    bobToken = await mintBearer('bob');
    session = (await openSession(host, aliceToken)).session_id;
    await openSession(await host.connect(), bobToken);
  });
  after(async () => {
    await host.stop();
  });

  test('replays the whole conversation, one run per stored message, then pushes new messages live', async () => {
    const user = await append('agui-1', 'user', 'Book the standup');
    const first = await invoke('agui-1', 'c1', 'Standup');
    assert.equal(first.status, 'success');
    const reply = await append('agui-1', 'assistant', 'Booked.', {
      worker_output: { status: 'success', answer: 'Booked.', suggested_actions: ['share it'] },
    });

    const sse = await openSse(base, '/threads/agui-1/events', auth(aliceToken));
    try {
      assert.equal(sse.status, 200);
      assert.match(sse.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.equal(sse.headers.get('cache-control'), 'no-cache');

      const replayed = await sse.runs(3);
      for (const f of replayed) {
        assert.equal(json(f).type, f.event);
        assert.ok(EventSchemas.safeParse(json(f)).success, f.event);
      }
      const runs = runsOf(replayed);
      assert.deepEqual(runs.map((r) => r.map((f) => f.event)), [
        ['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED'],
        ['RUN_STARTED', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_RESULT', 'RUN_FINISHED'],
        ['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED'],
      ]);
      // In stored order, each run names its message; the runs belong to the thread.
      const stored = await history('agui-1', 'context');
      assert.deepEqual(runs.map(messageIdOfRun), stored.map((m) => m.id));
      assert.deepEqual(runs.map(messageIdOfRun), [user.id, stored[1]!.id, reply.id]);
      for (const run of runs) {
        const [start, end] = [json(run[0]!), json(run.at(-1)!)];
        assert.equal(start.threadId, 'agui-1');
        assert.deepEqual([end.threadId, end.runId], [start.threadId, start.runId]);
      }
      // Only RUN_FINISHED carries an event id, and the ids increase.
      assert.ok(replayed.every((f) => (f.id !== undefined) === (f.event === 'RUN_FINISHED')));
      const ids = replayed.filter((f) => f.id !== undefined).map((f) => Number(f.id));
      assert.deepEqual([...ids].sort((a, b) => a - b), ids);
      assert.equal(new Set(ids).size, 3);

      const [userText, toolEvents, replyText] = runs.map((r) => r.slice(1, -1).map(json));
      assert.deepEqual(userText!.map((e) => [e.messageId, e.role, e.delta]), [
        [user.id, 'user', undefined], [user.id, undefined, 'Book the standup'], [user.id, undefined, undefined],
      ]);
      assert.equal(replyText![0]!.role, 'assistant');
      assert.equal(replyText![1]!.delta, 'Booked.');
      for (const e of [...userText!, ...replyText!]) {
        assert.deepEqual(Object.keys(e).filter((k) => !['type', 'timestamp', 'messageId', 'role', 'delta'].includes(k)), [], 'no UI on text');
      }
      assert.ok(!replayed.some((f) => f.data!.includes('suggested_actions')), 'worker_output is not streamed');

      assert.ok(toolEvents!.every((e) => e.toolCallId === 'c1'));
      assert.equal(toolEvents![0]!.toolCallName, 'project_cli');
      assert.deepEqual(JSON.parse(toolEvents![1]!.delta!), createArgs('Standup'));
      const result = toolEvents![3]!;
      assert.equal(result.content, first.content[0]!.text, 'RESULT.content is the tool/invoke text, byte for byte');
      assert.equal(result.content, stored[1]!.content);
      assert.equal(result.role, 'tool');
      assert.ok(liveUi('c1'));
      assert.deepEqual(result.ui_schema, liveUi('c1'), 'the same ui_schema the live notification carried');
      assert.deepEqual(result.metadata, { ui_schema: liveUi('c1') }, 'and again in metadata');
      assert.ok(!replayed.some((f) => f.data!.includes('ui_hints')));

      // Live: a call and a message appended by the host each arrive as their run.
      const second = await invoke('agui-1', 'c2', 'Retro');
      const pushed = runsOf(await sse.runs(1))[0]!;
      assert.deepEqual(pushed.map((f) => f.event), ['RUN_STARTED', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_RESULT', 'RUN_FINISHED']);
      assert.equal(json(pushed[4]!).content, second.content[0]!.text);
      assert.deepEqual(json(pushed[4]!).metadata, { ui_schema: liveUi('c2') });
      assert.ok(Number(pushed.at(-1)!.id) > ids.at(-1)!);

      const later = await append('agui-1', 'user', 'Thanks');
      const text = runsOf(await sse.runs(1))[0]!;
      assert.deepEqual(text.slice(1, -1).map((f) => [f.event, json(f).messageId]), [
        ['TEXT_MESSAGE_START', later.id], ['TEXT_MESSAGE_CONTENT', later.id], ['TEXT_MESSAGE_END', later.id],
      ]);

      // Answering a stored call again stores nothing new, so nothing is pushed: a stream writes a live run
      // only when the bus hands it a message, and a call's publish is over before its answer leaves.
      const heard: number[] = [];
      const stopHearing = host.services.threadEvents.listen('alice', 'agui-1', (e) => heard.push(e.row.thread_seq));
      const again = await invoke('agui-1', 'c1', 'Standup');
      stopHearing();
      assert.equal(again.content[0]!.text, first.content[0]!.text);
      assert.deepEqual(heard, [], 'nothing published for the replayed call');
    } finally {
      sse.close();
    }
  });

  test('@ag-ui/client follows a thread: replay, then a resume with Last-Event-ID and live calls', async () => {
    const thread = 'agui-client';
    await append(thread, 'user', 'Plan my week');
    await invoke(thread, 'k1', 'Standup');
    await append(thread, 'assistant', 'Standup booked.', { worker_output: { status: 'success', answer: 'Standup booked.' } });

    // A front end's fetch, recording the bytes it reads (the client's SSE parser ignores `id:`).
    const url = `${base}/threads/${thread}/events`;
    const recorded: string[] = [];
    const aborts: AbortController[] = [];
    const open = (headers: Record<string, string>) => async () => {
      const abort = new AbortController();
      aborts.push(abort);
      const res = await fetch(url, { headers: { ...auth(aliceToken), ...headers }, signal: abort.signal });
      const [forClient, forRecord] = res.body!.tee();
      const index = recorded.push('') - 1;
      void (async () => {
        const reader = forRecord.getReader();
        const decoder = new TextDecoder();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          recorded[index] += decoder.decode(value, { stream: true });
        }
      })().catch(() => {});
      return new Response(forClient, { status: res.status, headers: res.headers });
    };
    const recordedRuns = async (index: number, n: number) => {
      await waitFor(() => (recorded[index] ?? '').split('event: RUN_FINISHED').length - 1 >= n, `${n} recorded runs`, 10_000, 10).catch(() => {});
      return parseFrames(recorded[index] ?? '').frames.filter((f) => f.comment === undefined);
    };

    const agent = new ThreadFollower(open({}), thread);
    try {
      // 1. The replay: three runs, then the front end goes away.
      const replay = await follow(agent, { runs: 3 });
      aborts[0]!.abort();
      const firstFrames = await recordedRuns(0, 3);
      const lastId = firstFrames.filter((f) => f.id !== undefined).at(-1)!.id!;
      assert.equal(agent.messages.filter((m) => m.role !== 'assistant' || !('toolCalls' in m)).length, 3);

      // 2. A call stored while it was away, then a resume with Last-Event-ID and live calls.
      await invoke(thread, 'k2', 'Retro');
      let liveDone!: Promise<unknown>;
      const resumed = new ThreadFollower(open({ 'last-event-id': lastId }), thread);
      resumed.setMessages(agent.messages);
      const second = await follow(resumed, {
        runs: 3,
        onRunFinished: (n) => {
          // The missed call has arrived; now the host goes on, live.
          if (n === 1) liveDone = invoke(thread, 'k3', 'Planning').then(() => append(thread, 'assistant', 'All set.'));
        },
      });
      await liveDone;
      aborts[1]!.abort();
      const secondFrames = await recordedRuns(1, 3);

      // The resume restarted at the next whole run: the missed call, not a repeat of what was received.
      assert.equal(secondFrames[0]!.event, 'RUN_STARTED');
      assert.equal(runsOf(secondFrames).map(messageIdOfRun).length, 3);
      assert.ok(!runsOf(firstFrames).map(messageIdOfRun).includes(messageIdOfRun(runsOf(secondFrames)[0]!)));

      // The verifier passed on both connections (follow() would have rejected), and on the two as one stream.
      const raw = recorded.slice(0, 2).join('');
      await verifySse(raw);
      assert.ok(!raw.includes('ui_hints'));
      for (const e of [...replay.events, ...second.events]) {
        if (TEXT_TYPES.has(e.type)) assert.ok(!('ui_schema' in e) && !('metadata' in e), `${e.type} carries no UI`);
      }
      for (const f of [...firstFrames, ...secondFrames].filter((x) => TEXT_TYPES.has(x.event!))) {
        assert.ok(!('ui_schema' in json(f)) && !('metadata' in json(f)), `${f.event} carries no UI on the wire either`);
      }
      // The client drops the top-level ui_schema (not an AG-UI field), and nothing else.
      for (const w of [...replay.warnings, ...second.warnings]) assert.match(w, /Removed unrecognised material at '\/ui_schema' on TOOL_CALL_RESULT/);

      // The rebuilt conversation is the thread's history: user, assistant and tool messages, in order,
      // the projection as tool content and the live ui_schema in the tool message's metadata.
      const messages = resumed.messages;
      assert.ok(!JSON.stringify(messages).includes('ui_hints'));
      const holders = messages.filter((m) => m.role === 'assistant' && 'toolCalls' in m && m.toolCalls);
      const conversation = messages.filter((m) => !holders.includes(m));
      const ui = await history(thread, 'ui');
      const context = await history(thread, 'context');
      assert.deepEqual(
        conversation,
        ui.map((m, i) =>
          m.role === 'tool'
            ? { id: m.id, role: 'tool', toolCallId: m.tool_call_id, content: context[i]!.content, ...(m.ui_schema ? { metadata: { ui_schema: m.ui_schema } } : {}) }
            : { id: m.id, role: m.role, content: m.content },
        ),
      );
      assert.deepEqual(conversation.map((m) => m.role), ['user', 'tool', 'assistant', 'tool', 'tool', 'assistant']);
      const k3 = conversation.find((m) => m.role === 'tool' && m.toolCallId === 'k3')!;
      assert.ok(liveUi('k3'));
      assert.deepEqual(k3.metadata, { ui_schema: liveUi('k3') }, 'the live ui_schema, on the rebuilt tool message');
      // AG-UI files each call under an assistant message that holds it, right before its result.
      for (const tool of conversation.filter((m) => m.role === 'tool')) {
        const at = messages.indexOf(tool);
        const holder = messages[at - 1] as { toolCalls?: Array<{ id: string; function: { name: string; arguments: string } }> };
        assert.equal(holder.toolCalls?.[0]?.id, (tool as { toolCallId: string }).toolCallId);
        assert.equal(holder.toolCalls[0]!.function.name, 'project_cli');
        assert.equal(JSON.parse(holder.toolCalls[0]!.function.arguments).module, 'calendar');
      }
    } finally {
      for (const a of aborts) a.abort();
    }
  });

  test('Last-Event-ID resumes at the next whole run; ?replay=0 skips the history', async () => {
    const first = await openSse(base, '/threads/agui-1/events', auth(aliceToken));
    const all = await first.runs(5);
    first.close();
    const finished = all.filter((f) => f.event === 'RUN_FINISHED');

    const resumed = await openSse(base, '/threads/agui-1/events?replay=0', { ...auth(aliceToken), 'last-event-id': finished[1]!.id! });
    try {
      const after = all.slice(all.indexOf(finished[1]!) + 1);
      assert.deepEqual((await resumed.take(after.length)).map((f) => f.data), after.map((f) => f.data));
      // Then the stream is live: a message appended now is the next run, with nothing sent twice before it.
      const barrier = await append('agui-1', 'user', 'after the resume');
      const next = runsOf(await resumed.runs(1))[0]!;
      assert.equal(json(next[1]!).messageId, barrier.id);
    } finally {
      resumed.close();
    }

    // An id this stream never wrote is ignored: the history is replayed (unless ?replay=0).
    const odd = await openSse(base, '/threads/agui-1/events', { ...auth(aliceToken), 'last-event-id': 'msg_x:2' });
    try {
      assert.deepEqual((await odd.runs(5)).map((f) => f.data), all.map((f) => f.data));
    } finally {
      odd.close();
    }

    const fresh = await openSse(base, '/threads/agui-1/events?replay=0', auth(aliceToken));
    try {
      assert.equal(fresh.status, 200);
      // No history: the first run on the stream is the call made now.
      await invoke('agui-1', 'c3', 'Planning');
      const [started, start] = await fresh.take(2);
      assert.equal(json(started!).type, 'RUN_STARTED');
      assert.equal(json(start!).type, 'TOOL_CALL_START');
      assert.equal(json(start!).toolCallId, 'c3');
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
    await waitFor(() => /"msg":"ag-ui stream closed"/.test(host.stderr()), 'the log line of a closed stream');
    const stderr = host.stderr();
    assert.match(stderr, /"msg":"ag-ui stream opened"/);
    assert.match(stderr, /"msg":"ag-ui stream closed"/);
    for (const t of [aliceToken, bobToken, ...badTokens]) assert.ok(!stderr.includes(t));
  });
});

describe('AG-UI event stream, in process', () => {
  let server: Server;
  let base: string;
  let services: Services;
  let row: MessageRow;
  let token: string;

  before(async () => {
    const store = openSqliteStore(join(tempDir(), 'toolgate.db'));
    services = {
      store,
      log: createLogger(() => {}),
      env: {},
      bearerKeys: { kind: 'secret', secret: new TextEncoder().encode(TEST_BEARER_SECRET), origin: 'env' },
      threadEvents: new ThreadEventBus(),
      sessions: new SessionRegistry(),
      approvals: new ApprovalWaiters(),
    } as unknown as Services;
    await store.transaction((tx) => tx.users.ensure('erin'));
    const args = createArgs('Stored');
    const output = buildToolAgentOutput(
      { ok: true, module: 'calendar', method: 'create', data: { event: { id: 'evt_1', owner_id: 'erin', title: 'Stored', start_at: args.input.start_at, end_at: args.input.end_at, location: null, description: null, created_at: '2026-04-20T09:00:00.000Z', updated_at: '2026-04-20T09:00:00.000Z' } } },
      args,
      'k1',
      deriveUiHints,
    );
    row = await store.transaction((tx) =>
      tx.messages.insert({ userId: 'erin', threadId: 'quiet', role: 'tool', content: projectText(output), metadataJson: JSON.stringify({ tool_agent_output: output }), toolCallId: 'k1', status: output.status }),
    );
    token = await mintBearer('erin');
    const ctx = serveContext(services);
    server = createHttpServer(ctx, [agUiStreamRoute(ctx, { pingIntervalMs: 50 })]);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await services.store.close();
  });

  test('pings an idle stream, and drops its listener when the client goes away', async () => {
    const sse = await openSse(base, '/threads/quiet/events', { authorization: `Bearer ${token}` });
    assert.equal(sse.status, 200);
    const replayed = await sse.runs(1);
    assert.ok(replayed.every((f) => json(f).timestamp === Date.parse(row.created_at)));
    assert.equal((await sse.next({ comments: true })).comment, 'ping');
    assert.equal(services.threadEvents.count('erin', 'quiet'), 1);

    // A message the stream already sent (same sequence) is not sent again; a later one is, with the same bytes.
    // The later one is the barrier: a repeat would be the run before it, and its RUN_FINISHED id the old seq.
    services.threadEvents.publish({ userId: 'erin', threadId: 'quiet', row });
    services.threadEvents.publish({ userId: 'erin', threadId: 'quiet', row: { ...row, thread_seq: row.thread_seq + 1 } });
    const live = await sse.runs(1);
    assert.deepEqual(live.map((f) => f.data), replayed.map((f) => f.data), 'live and replayed are the same bytes');
    assert.equal(live.at(-1)!.id, String(row.thread_seq + 1));

    sse.close();
    await waitFor(() => services.threadEvents.count() === 0, () => `no listener left on the bus (${services.threadEvents.count()})`, 5_000, 20);
  });

  test('a Last-Event-ID at or past the end replays nothing; a malformed one replays everything', async () => {
    const atEnd = await openSse(base, '/threads/quiet/events', { authorization: `Bearer ${token}`, 'last-event-id': String(row.thread_seq) });
    try {
      // A message stored now is the barrier: the stream sends it (read by its replay, or live from the bus),
      // and anything it replayed would come before it.
      const later = await services.store.transaction((tx) => tx.messages.insert({ userId: 'erin', threadId: 'quiet', role: 'user', content: 'later', metadataJson: '{}' }));
      services.threadEvents.publish({ userId: 'erin', threadId: 'quiet', row: later });
      const first = await atEnd.runs(1);
      assert.equal(first.at(-1)!.id, String(later.thread_seq), 'nothing replayed before the message stored after the stream opened');
    } finally {
      atEnd.close();
    }
    const odd = await openSse(base, '/threads/quiet/events', { authorization: `Bearer ${token}`, 'last-event-id': `${row.id}:2` });
    try {
      assert.equal((await odd.runs(1)).at(-1)!.id, String(row.thread_seq));
    } finally {
      odd.close();
    }
  });

  test('a Last-Event-ID past the end sends the next message stored, not only those past the id', async () => {
    // An id the thread has not reached (a stale front end, a thread id used again after a reset) must not
    // silence the stream until the thread catches up with it: the doc says "nothing until the next message".
    const end = await services.store.read((tx) => tx.messages.page('erin', 'quiet', undefined, 1, { withMetadata: false }));
    const ahead = end.rows.at(-1)!.thread_seq + 100;
    const sse = await openSse(base, '/threads/quiet/events', { authorization: `Bearer ${token}`, 'last-event-id': String(ahead) });
    try {
      const next = await services.store.transaction((tx) => tx.messages.insert({ userId: 'erin', threadId: 'quiet', role: 'user', content: 'next', metadataJson: '{}' }));
      services.threadEvents.publish({ userId: 'erin', threadId: 'quiet', row: next });
      const run = await sse.runs(1);
      assert.ok(next.thread_seq < ahead);
      assert.equal(run.at(-1)!.id, String(next.thread_seq), 'the message stored after the stream opened');
    } finally {
      sse.close();
    }
  });
});

describe('ThreadEventBus', () => {
  const row = { thread_seq: 1, user_id: 'u', id: 'msg_1', thread_id: 't', role: 'user', content: 'hi', metadata: '{}', tool_call_id: null, status: null, created_at: '' } as MessageRow;

  test('delivers a thread’s messages to its listeners only, keyed by (user, thread)', () => {
    const bus = new ThreadEventBus();
    const seen: string[] = [];
    bus.listen('ann', 't', (e) => seen.push(`ann:${e.row.id}`));
    bus.listen('bob', 't', (e) => seen.push(`bob:${e.row.id}`));
    bus.publish({ userId: 'ann', threadId: 't', row });
    bus.publish({ userId: 'ann', threadId: 'other', row });
    bus.publish({ userId: '["ann","t"]', threadId: '', row });
    assert.deepEqual(seen, ['ann:msg_1']);
  });

  test('a listener that throws does not stop the others; stopping twice is harmless', () => {
    const bus = new ThreadEventBus();
    const seen: string[] = [];
    bus.listen('u', 't', () => {
      throw new Error('broken stream');
    });
    const stop = bus.listen('u', 't', (e) => seen.push(e.row.id));
    bus.publish({ userId: 'u', threadId: 't', row });
    assert.deepEqual(seen, [row.id]);
    stop();
    stop();
    assert.equal(bus.count('u', 't'), 1);
  });
});
