/**
 * The behaviours the runner checks, in order, over one shared context. Each
 * names a rule of the public protocol; later checks reuse the session and
 * the calls of earlier ones, and say so when those are missing.
 */
import { randomUUID } from 'node:crypto';
import * as P from '../protocol/methods.js';
import { RpcErrorCode } from '../protocol/errors.js';
import { ACTION_DATA, BATCH_MAX_ITEMS } from '../protocol/actions.js';
import { TOOL_NAME, type ToolCallArgs, type ToolResponse } from '../protocol/tool.js';
import type { ConformanceClient } from './client.js';
import { Skip, brief, expect, expectSame, fail, ok, rpcError } from './check.js';
import type { WireValidator } from './wire-validator.js';

export interface Context {
  /** The main connection, user A. */
  a: ConformanceClient;
  /** Opens another connection to the same implementation (WebSocket only; null on stdio). */
  connect: (() => Promise<ConformanceClient>) | null;
  clients: ConformanceClient[];
  tokenA: string;
  tokenB: string | undefined;
  validator: WireValidator;
  /** Unique per run, so the runner can be pointed at the same database again and again. */
  run: string;
  thread: string;
  sessionA?: string;
  sessionB?: string;
  /** The first successful call: its args, response and live final notification. */
  first?: { toolCallId: string; args: ToolCallArgs; response: ToolResponse; final: Record<string, unknown> };
  /** Milliseconds to wait for a notification that should, or should not, arrive on another connection. */
  settleMs: number;
}

export interface Check {
  name: string;
  run(ctx: Context): Promise<void>;
}

const sessionA = (ctx: Context): string => ctx.sessionA ?? fail('needs a session (session/open failed earlier)');

/** A tool call, with the `tool/result` notifications for it that arrived before its response and after. */
async function invoke(ctx: Context, client: ConformanceClient, session: string, thread: string, toolCallId: string, args: ToolCallArgs) {
  const before = client.received.length;
  const outcome = await client.call(P.ToolInvokeRequest, { session_id: session, thread_id: thread, tool_call_id: toolCallId, args });
  const response = ok(outcome, `tool/invoke ${args.module}.${args.method}`);
  const mine = (n: Record<string, unknown>) => n.tool_call_id === toolCallId && n.thread_id === thread;
  const early = client.toolResults(before, outcome.seq).filter(mine);
  const late = client.toolResults(outcome.seq).filter(mine);
  return { response, early, late, seq: outcome.seq };
}

type Call = Awaited<ReturnType<typeof invoke>>;

/**
 * Asserts the notification stream of one call: at least one, all before the response, only the
 * last one final. When none came before the response, waits a moment to tell "late" from "never".
 */
async function expectStream(ctx: Context, client: ConformanceClient, call: Call) {
  const { early, response } = call;
  if (early.length === 0) await client.waitFor(() => client.toolResults(call.seq).some((n) => n.tool_call_id === response.tool_call_id), ctx.settleMs);
  const late = client.toolResults(call.seq).filter((n) => n.tool_call_id === response.tool_call_id);
  expect(late.length === 0, `${late.length} tool/result notification(s) arrived after the response; all must come before it`);
  expect(early.length > 0, 'no tool/result notification arrived before the response');
  const final = early[early.length - 1]!;
  expect(final.final === true, `the last notification before the response has final ${brief(final.final)}, expected true`);
  const earlyFinals = early.slice(0, -1).filter((n) => n.final !== false);
  expect(earlyFinals.length === 0, `${earlyFinals.length} notification(s) before the last one are not final: false`);
  expectSame(final.status, response.status, 'final notification status vs response status');
  return final;
}

function text(response: ToolResponse): string {
  expect(response.content.length === 1 && response.content[0]?.type === 'text', `content must be one text item, got ${brief(response.content)}`);
  return response.content[0]!.text;
}

async function toolMessages(ctx: Context, client: ConformanceClient, session: string, thread: string, view: 'ui' | 'context') {
  const page = ok(await client.call(P.HistoryGetRequest, { session_id: session, thread_id: thread, view, limit: 500 }), `history/get ${view}`);
  return { all: page.messages, tools: page.messages.filter((m) => m.role === 'tool') };
}

const memoryArgs = (ctx: Context, content: string): ToolCallArgs => ({
  module: 'memory',
  method: 'update',
  input: { key: `conformance-${ctx.run}`, content },
});

const event = (day: number, hour: number, title = `conformance event ${day}.${hour}`) => ({
  title,
  start_at: `2031-03-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00+00:00`,
  end_at: `2031-03-${String(day).padStart(2, '0')}T${String(hour + 1).padStart(2, '0')}:00:00+00:00`,
});

/**
 * A syntactically valid JWT with a signature that cannot verify: the first
 * character of the signature changed. (Not the last one: its low bits are
 * base64url padding, so changing it may leave the decoded signature intact.)
 */
function tamper(token: string): string {
  const at = token.lastIndexOf('.') + 1;
  const c = token[at] === 'A' ? 'B' : 'A';
  return `${token.slice(0, at)}${c}${token.slice(at + 1)}`;
}

export const CHECKS: Check[] = [
  {
    name: 'lifecycle: any request before initialize is answered -32002',
    async run({ a }) {
      rpcError(await a.request('thread/list', { session_id: 'none' }), RpcErrorCode.NotInitialized, 'thread/list before initialize');
      rpcError(await a.request('no/such-method', {}), RpcErrorCode.NotInitialized, 'an unknown method before initialize');
    },
  },
  {
    name: 'initialize: protocol_version "1", server_info, one tool project_cli with a thin input schema',
    async run({ a }) {
      const r = ok(await a.call(P.InitializeRequest, { protocol_version: '1', client_info: { name: 'toolgate-conformance', version: '1' } }), 'initialize');
      expectSame(r.protocol_version, '1', 'protocol_version');
      expectSame(r.tool.name, TOOL_NAME, 'tool.name');
      const schema = r.tool.input_schema as { type?: unknown; required?: unknown; properties?: Record<string, { type?: unknown }> };
      expectSame(schema.type, 'object', 'input_schema.type');
      expect(Array.isArray(schema.required) && ['module', 'method', 'input'].every((k) => (schema.required as unknown[]).includes(k)), `input_schema.required must hold module, method and input, got ${brief(schema.required)}`);
      expectSame(schema.properties?.module?.type, 'string', 'input_schema.properties.module.type');
      expectSame(schema.properties?.method?.type, 'string', 'input_schema.properties.method.type');
      expectSame(schema.properties?.input?.type, 'object', 'input_schema.properties.input.type');
      expect(!/"enum"/.test(JSON.stringify(schema)), 'input_schema lists an enum: it must not carry the action matrix');
    },
  },
  {
    name: 'session/open: a wrongly signed bearer token is -32001 and the error does not echo it',
    async run({ a, tokenA }) {
      const bad = tamper(tokenA);
      const e = rpcError(await a.call(P.SessionOpenRequest, { auth: { type: 'bearer', token: bad } }), RpcErrorCode.Unauthorized, 'session/open with a tampered token');
      const shown = JSON.stringify(e);
      expect(!shown.includes(bad) && !shown.includes(tokenA.split('.')[2]!), 'the error carries the token');
    },
  },
  {
    name: 'session/open: opens a session for the token\'s user',
    async run(ctx) {
      const r = ok(await ctx.a.call(P.SessionOpenRequest, { auth: { type: 'bearer', token: ctx.tokenA } }), 'session/open');
      if (typeof r.session_id === 'string' && r.session_id.length > 0) ctx.sessionA = r.session_id;
      expect(typeof r.session_id === 'string' && r.session_id.length > 0, `session_id is missing or empty: ${brief(r.session_id)}`);
      expect(typeof r.user_id === 'string' && r.user_id.length > 0, `user_id is missing or empty: ${brief(r.user_id)}`);
    },
  },
  {
    name: 'tool/invoke: an unknown session_id is -32001',
    async run(ctx) {
      const outcome = await ctx.a.call(P.ToolInvokeRequest, {
        session_id: `no-such-session-${ctx.run}`,
        thread_id: ctx.thread,
        tool_call_id: 'x',
        args: { module: 'memory', method: 'read', input: {} },
      });
      rpcError(outcome, RpcErrorCode.Unauthorized, 'tool/invoke with an unknown session');
    },
  },
  {
    name: 'tool/invoke: a malformed envelope (no args; args.input not an object; an extra args key) is -32602',
    async run(ctx) {
      const s = sessionA(ctx);
      const base = { session_id: s, thread_id: ctx.thread, tool_call_id: `bad-${ctx.run}` };
      rpcError(await ctx.a.request('tool/invoke', base), RpcErrorCode.InvalidParams, 'tool/invoke without args');
      rpcError(await ctx.a.request('tool/invoke', { ...base, args: { module: 'memory', method: 'read', input: 'x' } }), RpcErrorCode.InvalidParams, 'args.input a string');
      rpcError(
        await ctx.a.request('tool/invoke', { ...base, args: { module: 'memory', method: 'read', input: {}, extra: 1 } }),
        RpcErrorCode.InvalidParams,
        'args with a key the model cannot write',
      );
    },
  },
  {
    name: 'tool/invoke: tool/result notifications reach the caller before the response, only the last one final',
    async run(ctx) {
      const s = sessionA(ctx);
      const toolCallId = `call-${ctx.run}-1`;
      const args = memoryArgs(ctx, 'remember the conformance run');
      const call = await invoke(ctx, ctx.a, s, ctx.thread, toolCallId, args);
      const { response } = call;
      expectSame(response.tool_call_id, toolCallId, 'response tool_call_id');
      expectSame(response.status, 'success', 'response status');
      const final = await expectStream(ctx, ctx.a, call);
      expectSame(final.tool_name, TOOL_NAME, 'tool_name');
      expectSame(final.tool_call_args, args, 'tool_call_args (exactly what the model wrote)');
      ctx.first = { toolCallId, args, response, final };
    },
  },
  {
    name: 'tool/invoke: the text is the full JSON projection {status, module, method, data} of the result',
    async run(ctx) {
      const first = ctx.first ?? fail('needs the first call');
      const result = first.final.result as { module: string; method: string; data: unknown } | undefined;
      expect(result, 'the final notification of a successful call has no result');
      expectSame([result.module, result.method], ['memory', 'update'], 'result module/method');
      const expected = JSON.stringify({ status: first.response.status, module: result.module, method: result.method, data: result.data });
      expectSame(text(first.response), expected, 'content[0].text');
      const shape = ctx.validator.check('ToolProjection', JSON.parse(text(first.response)));
      expect(shape.length === 0, `the text is not a ToolProjection: ${shape.join('; ')}`);
      const problems = ctx.validator.check(ACTION_DATA['memory.update'], result.data);
      expect(problems.length === 0, `memory.update data does not match ${ACTION_DATA['memory.update']}: ${problems.join('; ')}`);
    },
  },
  {
    name: 'history/get context view: the tool message is byte-identical to the text tool/invoke returned',
    async run(ctx) {
      const first = ctx.first ?? fail('needs the first call');
      const { tools } = await toolMessages(ctx, ctx.a, sessionA(ctx), ctx.thread, 'context');
      const mine = tools.filter((m) => m.tool_call_id === first.toolCallId);
      expect(mine.length === 1, `expected exactly one tool message for the call, found ${mine.length}`);
      expectSame(mine[0]!.content, text(first.response), 'history content vs tool/invoke text');
      expectSame(mine[0]!.status, first.response.status, 'history status');
    },
  },
  {
    name: 'history/get ui view: the replayed ui_schema equals the live notification\'s',
    async run(ctx) {
      const first = ctx.first ?? fail('needs the first call');
      expect(first.final.ui_schema, 'memory.update has a stable UI, but its final notification carries no ui_schema');
      const { tools } = await toolMessages(ctx, ctx.a, sessionA(ctx), ctx.thread, 'ui');
      const mine = tools.find((m) => m.tool_call_id === first.toolCallId);
      expect(mine, 'the call is missing from the ui view');
      expectSame(mine.ui_schema, first.final.ui_schema, 'ui view ui_schema vs live ui_schema');
    },
  },
  {
    name: 'idempotency: the same tool_call_id with the same args returns the stored outcome and runs nothing again',
    async run(ctx) {
      const first = ctx.first ?? fail('needs the first call');
      const s = sessionA(ctx);
      const before = await toolMessages(ctx, ctx.a, s, ctx.thread, 'context');
      const again = ok(
        await ctx.a.call(P.ToolInvokeRequest, { session_id: s, thread_id: ctx.thread, tool_call_id: first.toolCallId, args: first.args }),
        'the repeated tool/invoke',
      );
      expectSame(text(again), text(first.response), 'the repeated call\'s text');
      const after = await toolMessages(ctx, ctx.a, s, ctx.thread, 'context');
      expectSame(after.all.length, before.all.length, 'message count after the repeat');
    },
  },
  {
    name: 'idempotency: the same tool_call_id with other args is a failure DUPLICATE_TOOL_CALL_ID, the stored call untouched',
    async run(ctx) {
      const first = ctx.first ?? fail('needs the first call');
      const s = sessionA(ctx);
      const r = ok(
        await ctx.a.call(P.ToolInvokeRequest, { session_id: s, thread_id: ctx.thread, tool_call_id: first.toolCallId, args: memoryArgs(ctx, 'something else') }),
        'tool/invoke with a reused id',
      );
      expectSame(r.status, 'failure', 'status');
      const body = JSON.parse(text(r)) as { status?: unknown; error?: { code?: unknown } };
      expectSame(body.error?.code, 'DUPLICATE_TOOL_CALL_ID', 'error.code');
      const { tools } = await toolMessages(ctx, ctx.a, s, ctx.thread, 'context');
      const mine = tools.filter((m) => m.tool_call_id === first.toolCallId);
      expect(mine.length === 1 && mine[0]!.content === text(first.response), 'the stored tool message changed');
    },
  },
  {
    name: 'tool failures: a successful response with status failure and a structured error {code, message, module, method}',
    async run(ctx) {
      const s = sessionA(ctx);
      const unknown = await invoke(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-unknown`, { module: 'nosuch', method: 'nothing', input: {} });
      expectSame(unknown.response.status, 'failure', 'unknown action status');
      const final = await expectStream(ctx, ctx.a, unknown);
      const error = final.error as Record<string, unknown> | undefined;
      expect(error, 'the failure notification has no error');
      expectSame(error.code, 'UNKNOWN_ACTION', 'error.code of an unknown action');
      expect(typeof error.message === 'string' && error.message.length > 0, 'error.message is empty');
      expectSame(text(unknown.response), JSON.stringify({ status: 'failure', error }), 'failure text');
      const shape = ctx.validator.check('ToolProjection', JSON.parse(text(unknown.response)));
      expect(shape.length === 0, `the failure text is not a ToolProjection: ${shape.join('; ')}`);

      const invalid = await invoke(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-invalid`, {
        module: 'calendar',
        method: 'create',
        input: { title: 'x', start_at: 'tomorrow', end_at: 'later' },
      });
      const body = JSON.parse(text(invalid.response)) as { error?: { code?: unknown; input_schema?: unknown } };
      expectSame(body.error?.code, 'INVALID_ACTION_INPUT', 'error.code of a bad input');
      expect(body.error?.input_schema && typeof body.error.input_schema === 'object', 'INVALID_ACTION_INPUT carries no input_schema');
    },
  },
  {
    name: `batch: one partial notification per item, in order, then the final one (an invalid item fails alone)`,
    async run(ctx) {
      const s = sessionA(ctx);
      const bad = { ...event(3, 10), end_at: '2031-03-03T09:00:00+00:00' };
      const args = { module: 'calendar', method: 'create', input: { items: [event(3, 8), bad, event(3, 12)] } };
      const call = await invoke(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-batch`, args);
      const { response, early } = call;
      const final = await expectStream(ctx, ctx.a, call);
      const partials = early.slice(0, -1);
      expectSame(partials.length, 3, 'non-final notifications');
      partials.forEach((n, i) => {
        expectSame(n.status, 'partial', `item ${i} status`);
        const r = n.result as { module?: unknown; method?: unknown; data?: { index?: unknown; ok?: unknown } } | undefined;
        expectSame([r?.module, r?.method, r?.data?.index, r?.data?.ok], ['calendar', 'create', i, i !== 1], `item ${i} result module/method/index/ok`);
      });
      expectSame(response.status, 'partial', 'final status with one failed item');
      const data = (final.result as { data?: unknown } | undefined)?.data as { created?: unknown; failed?: unknown } | undefined;
      expectSame([data?.created, data?.failed], [2, 1], 'created/failed');
      const problems = ctx.validator.check('CalendarBatchData', data);
      expect(problems.length === 0, `batch data does not match CalendarBatchData: ${problems.join('; ')}`);
    },
  },
  {
    name: `batch: more than ${BATCH_MAX_ITEMS} items is INVALID_ACTION_INPUT before anything runs`,
    async run(ctx) {
      const items = Array.from({ length: BATCH_MAX_ITEMS + 1 }, (_, i) => event(10 + (i % 10), 1 + (i % 20)));
      const call = await invoke(ctx, ctx.a, sessionA(ctx), ctx.thread, `call-${ctx.run}-toobig`, {
        module: 'calendar',
        method: 'create',
        input: { items },
      });
      const { response, early } = call;
      expectSame(response.status, 'failure', 'status');
      expectSame((JSON.parse(text(response)) as { error?: { code?: unknown } }).error?.code, 'INVALID_ACTION_INPUT', 'error.code');
      await expectStream(ctx, ctx.a, call);
      expectSame(early.length, 1, 'notifications (only the final one: no item ran)');
    },
  },
  {
    name: 'message/append: user and assistant messages land in history; worker_output with an unknown key is -32602',
    async run(ctx) {
      const s = sessionA(ctx);
      const user = ok(await ctx.a.call(P.MessageAppendRequest, { session_id: s, thread_id: ctx.thread, role: 'user', content: 'what is on my calendar?' }), 'append user');
      const workerOutput = { status: 'success' as const, answer: 'three events' };
      const assistant = ok(
        await ctx.a.call(P.MessageAppendRequest, { session_id: s, thread_id: ctx.thread, role: 'assistant', content: 'three events', worker_output: workerOutput }),
        'append assistant',
      );
      const page = ok(await ctx.a.call(P.HistoryGetRequest, { session_id: s, thread_id: ctx.thread, view: 'ui', limit: 2 }), 'history/get');
      expectSame(page.messages.map((m) => [m.id, m.role, m.content]), [[user.id, 'user', 'what is on my calendar?'], [assistant.id, 'assistant', 'three events']], 'the newest two messages');
      expectSame(page.messages[1]!.worker_output, workerOutput, 'worker_output in the ui view');
      expect(typeof page.next_before === 'string', 'next_before must page to the older messages');
      rpcError(
        await ctx.a.request('message/append', { session_id: s, thread_id: ctx.thread, role: 'assistant', content: 'x', worker_output: { ...workerOutput, ui_hints: {} } }),
        RpcErrorCode.InvalidParams,
        'worker_output with ui_hints',
      );
    },
  },
  {
    name: 'history/get of a thread that does not exist is -32602 THREAD_NOT_FOUND',
    async run(ctx) {
      const outcome = await ctx.a.call(P.HistoryGetRequest, { session_id: sessionA(ctx), thread_id: `never-${ctx.run}` });
      rpcError(outcome, RpcErrorCode.InvalidParams, 'history/get of an unknown thread', 'THREAD_NOT_FOUND');
    },
  },
  {
    name: 'thread/list: the user\'s threads, most recent first, with message counts',
    async run(ctx) {
      const r = ok(await ctx.a.call(P.ThreadListRequest, { session_id: sessionA(ctx), limit: 500 }), 'thread/list');
      const mine = r.threads.find((t) => t.thread_id === ctx.thread);
      expect(mine, `thread ${ctx.thread} is not listed`);
      expect(mine.message_count >= 5, `message_count ${mine.message_count} is lower than the messages this run stored`);
      const order = r.threads.map((t) => t.updated_at);
      expect(order.every((u, i) => i === 0 || order[i - 1]! >= u), 'threads are not ordered most recent first');
    },
  },
  {
    name: 'skills: skills/list lists the enabled skills, skills/read reads one, an unknown skill is -32602',
    async run(ctx) {
      const s = sessionA(ctx);
      const list = ok(await ctx.a.call(P.SkillsListRequest, { session_id: s }), 'skills/list');
      const skill = list.skills[0];
      if (skill) {
        const read = ok(await ctx.a.call(P.SkillsReadRequest, { session_id: s, name: skill.name }), `skills/read ${skill.name}`);
        expectSame([read.name, read.path], [skill.name, 'SKILL.md'], 'skills/read name/path');
        expect(read.content.length > 0, 'SKILL.md is empty');
      }
      rpcError(await ctx.a.call(P.SkillsReadRequest, { session_id: s, name: `no-such-skill-${ctx.run}` }), RpcErrorCode.InvalidParams, 'skills/read of an unknown skill');
      rpcError(
        await ctx.a.call(P.SkillsReadRequest, { session_id: s, name: skill?.name ?? 'x', path: '../../../../etc/passwd' }),
        RpcErrorCode.InvalidParams,
        'skills/read of a path leaving the folder',
      );
    },
  },
  {
    name: 'thread/subscribe: another connection receives the thread\'s notifications; thread/unsubscribe stops them',
    async run(ctx) {
      if (!ctx.connect) throw new Skip('needs a second connection (--ws)');
      const s = sessionA(ctx);
      const watcher = await ctx.connect();
      ok(await watcher.call(P.InitializeRequest, { protocol_version: '1' }), 'initialize on the second connection');
      const ws = ok(await watcher.call(P.SessionOpenRequest, { auth: { type: 'bearer', token: ctx.tokenA } }), 'session/open on the second connection');
      expectSame(ok(await watcher.call(P.ThreadSubscribeRequest, { session_id: ws.session_id, thread_id: ctx.thread }), 'thread/subscribe'), { thread_id: ctx.thread, subscribed: true }, 'thread/subscribe result');
      const id = `call-${ctx.run}-watched`;
      await invoke(ctx, ctx.a, s, ctx.thread, id, memoryArgs(ctx, 'watched'));
      const seen = await watcher.waitFor(() => watcher.toolResults(0).some((n) => n.tool_call_id === id && n.final === true), ctx.settleMs * 10);
      expect(seen, 'the subscribed connection did not receive the final tool/result');
      expectSame(ok(await watcher.call(P.ThreadUnsubscribeRequest, { session_id: ws.session_id, thread_id: ctx.thread }), 'thread/unsubscribe'), { thread_id: ctx.thread, subscribed: false }, 'thread/unsubscribe result');
      const unwatched = `call-${ctx.run}-unwatched`;
      await invoke(ctx, ctx.a, s, ctx.thread, unwatched, memoryArgs(ctx, 'unwatched'));
      await watcher.waitFor(() => false, ctx.settleMs);
      expect(!watcher.toolResults(0).some((n) => n.tool_call_id === unwatched), 'notifications still arrive after thread/unsubscribe');
    },
  },
  {
    name: 'thread isolation: another user cannot see the thread; the same thread_id is their own, separate thread',
    async run(ctx) {
      if (!ctx.tokenB) throw new Skip('needs --token-b');
      const b = ok(await ctx.a.call(P.SessionOpenRequest, { auth: { type: 'bearer', token: ctx.tokenB } }), 'session/open for user B');
      ctx.sessionB = b.session_id;
      rpcError(await ctx.a.call(P.HistoryGetRequest, { session_id: b.session_id, thread_id: ctx.thread }), RpcErrorCode.InvalidParams, 'B reading A\'s thread', 'THREAD_NOT_FOUND');
      const listed = ok(await ctx.a.call(P.ThreadListRequest, { session_id: b.session_id, limit: 500 }), 'thread/list for B');
      expect(!listed.threads.some((t) => t.thread_id === ctx.thread), 'B\'s thread/list shows A\'s thread');
      const before = await toolMessages(ctx, ctx.a, sessionA(ctx), ctx.thread, 'context');
      ok(await ctx.a.call(P.MessageAppendRequest, { session_id: b.session_id, thread_id: ctx.thread, role: 'user', content: `B writes ${ctx.run}` }), 'B appending to the same thread_id');
      const first = ctx.first ?? fail('needs the first call');
      // B reuses A's tool_call_id with A's args: in B's own thread the call runs; A's stored outcome is not B's.
      const bCall = await invoke(ctx, ctx.a, b.session_id, ctx.thread, first.toolCallId, first.args);
      expectSame(bCall.response.status, 'success', 'B\'s call status');
      const bHistory = await toolMessages(ctx, ctx.a, b.session_id, ctx.thread, 'context');
      expectSame(bHistory.all.map((m) => m.role), ['user', 'tool'], 'B\'s thread holds only B\'s messages');
      const after = await toolMessages(ctx, ctx.a, sessionA(ctx), ctx.thread, 'context');
      expectSame(after.all.map((m) => m.id), before.all.map((m) => m.id), 'A\'s thread after B wrote to the same thread_id');
      if (ctx.connect) {
        const spy = await ctx.connect();
        ok(await spy.call(P.InitializeRequest, { protocol_version: '1' }), 'initialize for B\'s watcher');
        const bs = ok(await spy.call(P.SessionOpenRequest, { auth: { type: 'bearer', token: ctx.tokenB } }), 'session/open B on a watcher');
        ok(await spy.call(P.ThreadSubscribeRequest, { session_id: bs.session_id, thread_id: ctx.thread }), 'B subscribing to the thread_id');
        const id = `call-${ctx.run}-private`;
        await invoke(ctx, ctx.a, sessionA(ctx), ctx.thread, id, memoryArgs(ctx, 'private'));
        await spy.waitFor(() => false, ctx.settleMs);
        expect(!spy.toolResults(0).some((n) => n.tool_call_id === id), 'B\'s subscription received A\'s tool/result');
      }
    },
  },
  {
    name: 'shutdown: answers null, later requests are refused, exit ends the connection',
    async run(ctx) {
      const r = await ctx.a.call(P.ShutdownRequest);
      expectSame(ok(r, 'shutdown'), null, 'shutdown result');
      const after = await ctx.a.call(P.ThreadListRequest, { session_id: ctx.sessionA ?? 'x' });
      expect(!after.ok && !after.missing, after.ok ? `a request after shutdown got a result: ${brief(after.result)}` : 'a request after shutdown got no answer');
      await ctx.a.notify(P.ExitNotification.method);
      const ended = await ctx.a.waitFor(() => ctx.a.closedReason() !== undefined, ctx.settleMs * 20);
      expect(ended, 'the connection is still open after exit');
      const code = ctx.a.transport.exitCode();
      expect(code === undefined || code === 0, `the process exited with ${code} after shutdown and exit, expected 0`);
    },
  },
  {
    name: 'secrets: no message received carries a bearer token',
    async run(ctx) {
      const tokens = [ctx.tokenA, ctx.tokenB].filter((t): t is string => !!t);
      for (const c of ctx.clients) {
        for (const r of c.received) {
          const raw = JSON.stringify(r.message);
          for (const t of tokens) expect(!raw.includes(t) && !raw.includes(t.split('.')[2]!), `message #${r.seq} carries a bearer token`);
        }
      }
    },
  },
  {
    name: 'schemas: every message received matches schemas/',
    async run(ctx) {
      const violations = ctx.clients.flatMap((c) => c.violations);
      if (violations.length > 0) fail(`${violations.length} message(s) off schema:\n${violations.slice(0, 10).map((v) => `  - ${v}`).join('\n')}`);
      expect(ctx.clients.some((c) => c.received.length > 0), 'no message was received at all');
    },
  },
];

export function newRunIds(): { run: string; thread: string } {
  const run = randomUUID().slice(0, 8);
  return { run, thread: `conformance-${run}` };
}
