/**
 * The behaviours the runner checks, in order, over one shared context. Each
 * names a rule of the public protocol; later checks reuse the session and
 * the calls of earlier ones, and say so when those are missing.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import * as P from '../protocol/methods.js';
import { RpcErrorCode } from '../protocol/errors.js';
import { ACTION_DATA, BATCH_MAX_ITEMS } from '../protocol/actions.js';
import { TOOL_NAME, type ToolCallArgs, type ToolResponse } from '../protocol/tool.js';
import type { ConformanceClient, Outcome } from './client.js';
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
  /** The HS256 bearer secret of the implementation, when given: lets the runner mint its own tokens. */
  secret: string | undefined;
  /** An agent profile narrower than the default, when given (`--agent`). */
  agent: string | undefined;
  /** An agent profile whose `approval.ask` includes `memory.forget`, when given (`--ask-agent`). */
  askAgent: string | undefined;
  /** How long a response may take: the longest the runner waits for a notification it must get. */
  waitMs: number;
  validator: WireValidator;
  /** Unique per run, so the runner can be pointed at the same database again and again. */
  run: string;
  thread: string;
  sessionA?: string;
  sessionB?: string;
  /** User B's id, as its session/open answered. */
  userB?: string;
  /** A single event this run created (calendar.create), for the read-back, update, share and delete checks. */
  event?: { id: string; title: string };
  /** The first successful call: its args, response and live final notification. */
  first?: { toolCallId: string; args: ToolCallArgs; response: ToolResponse; final: Record<string, unknown> };
  /** Milliseconds to wait for a notification that should, or should not, arrive on another connection. */
  settleMs: number;
  /** A session opened under `--ask-agent`. */
  askSession?: string;
  /** The memory.forget the first approval check asked and left awaiting its decision. */
  asked?: Asked;
  /** Every tool/invoke text received, with its action and whether it was a batch, for the bytes check. */
  texts?: Array<{ action: string; batch: boolean; text: string }>;
}

export interface Check {
  name: string;
  /** The section of docs/protocols/ the check enforces: `file.md#anchor`. */
  section: string;
  run(ctx: Context): Promise<void>;
}

const sessionA = (ctx: Context): string => ctx.sessionA ?? fail('needs a session (session/open failed earlier)');

/** A tool call, with the `tool/result` notifications for it that arrived before its response and after. */
async function invoke(ctx: Context, client: ConformanceClient, session: string, thread: string, toolCallId: string, args: ToolCallArgs) {
  const before = client.received.length;
  const outcome = await client.call(P.ToolInvokeRequest, { session_id: session, thread_id: thread, tool_call_id: toolCallId, args });
  const response = ok(outcome, `tool/invoke ${args.module}.${args.method}`);
  const content = response.content?.[0];
  if (content?.type === 'text') (ctx.texts ??= []).push({ action: `${args.module}.${args.method}`, batch: Array.isArray(args.input.items), text: content.text });
  const mine = (n: Record<string, unknown>) => n.tool_call_id === toolCallId && n.thread_id === thread;
  const early = client.toolResults(before, outcome.seq).filter(mine);
  const late = client.toolResults(outcome.seq).filter(mine);
  return { response, early, late, seq: outcome.seq };
}

type Call = Awaited<ReturnType<typeof invoke>>;

/** Action data and errors, read loosely: their shapes are checked against schemas/ as they arrive. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

/** The projection object of a response's text. */
function body(response: ToolResponse): { status?: unknown; module?: unknown; method?: unknown; data?: Loose; error?: Loose } {
  try {
    return JSON.parse(text(response)) as ReturnType<typeof body>;
  } catch {
    return fail(`content[0].text is not JSON: ${brief(text(response))}`);
  }
}

/** A single call that must succeed, its stream checked; returns its data and final notification. */
async function succeed(ctx: Context, client: ConformanceClient, session: string, thread: string, toolCallId: string, args: ToolCallArgs) {
  const call = await invoke(ctx, client, session, thread, toolCallId, args);
  const what = `${args.module}.${args.method}`;
  if (call.response.status !== 'success') fail(`${what} did not succeed: ${brief(text(call.response), 300)}`);
  const final = await expectStream(ctx, client, call);
  const data = (final.result as { data?: unknown } | undefined)?.data as Loose;
  expectSame(body(call.response).data, data, `${what}: the text's data vs the notification's result.data`);
  return { call, final, data };
}

/** Asserts what the ui-schema.md table says of one final notification: a ui_schema, or none. */
function expectUi(final: Record<string, unknown>, present: boolean, what: string): void {
  if (present) expect(final.ui_schema !== undefined, `${what}: the final notification carries no ui_schema (ui-schema.md: which calls carry one)`);
  else expect(final.ui_schema === undefined, `${what}: the final notification carries a ui_schema, but this action has none`);
}

/** The user id a token names (`sub`), read without verifying it. */
function subjectOf(token: string): string | undefined {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub?: unknown };
    return typeof payload.sub === 'string' ? payload.sub : undefined;
  } catch {
    return undefined;
  }
}

/** An HS256 JWT with exactly these claims, signed with `secret`. */
function mintToken(secret: string, claims: Record<string, unknown>): string {
  const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`;
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}

/**
 * Pieces of a token no message may carry: every 8 characters in a row of its
 * payload and signature (the header is the same in every token, so it is not
 * a secret). A partial echo (the last 10 characters, say) shows as well as a
 * whole one.
 */
function tokenPieces(token: string): string[] {
  const pieces: string[] = [];
  for (const segment of token.split('.').slice(1)) for (let i = 0; i + 8 <= segment.length; i++) pieces.push(segment.slice(i, i + 8));
  return pieces;
}

function leaks(value: unknown, token: string): string | undefined {
  const raw = JSON.stringify(value);
  return tokenPieces(token).find((p) => raw.includes(p));
}

interface PropertySchema {
  $ref?: string;
  properties?: Record<string, PropertySchema>;
  items?: PropertySchema;
  anyOf?: PropertySchema[];
}

/**
 * Where the keys of `value` leave the published order: each object's keys must come in the order of its
 * schema's `properties` (schemas/actions.json), at every depth ([Bytes](tool-protocol.md#bytes)).
 */
function keyOrderProblems(ctx: Context, schema: PropertySchema | undefined, value: unknown, path: string): string[] {
  if (!schema || value === null || typeof value !== 'object') return [];
  if (schema.$ref) return keyOrderProblems(ctx, ctx.validator.definition('actions', schema.$ref.replace('#/$defs/', '')) as PropertySchema, value, path);
  if (schema.anyOf) return schema.anyOf.flatMap((branch) => (branch.$ref || branch.properties || branch.items ? keyOrderProblems(ctx, branch, value, path) : []));
  if (Array.isArray(value)) return value.flatMap((v, i) => keyOrderProblems(ctx, schema.items, v, `${path}[${i}]`));
  if (!schema.properties) return [];
  const keys = Object.keys(value);
  const expected = Object.keys(schema.properties).filter((k) => keys.includes(k));
  const problems = isDeepEqualList(keys.filter((k) => expected.includes(k)), expected) ? [] : [`${path}: keys ${keys.join(', ')}; published order ${expected.join(', ')}`];
  for (const k of expected) problems.push(...keyOrderProblems(ctx, schema.properties[k], (value as Record<string, unknown>)[k], `${path}.${k}`));
  return problems;
}

const isDeepEqualList = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** The published input schema of an action (schemas/action-inputs.json), if the schemas hold it. */
function publishedInputSchema(ctx: Context, action: string): unknown {
  return ctx.validator.definition('action-inputs', action);
}

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

/** The canonical JSON of a value (object keys sorted, no whitespace) — the text `args_sha256` hashes (tool-protocol.md, Bytes). */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[k] = canonical((value as Record<string, unknown>)[k]);
    return out;
  }
  return value;
}

const argsSha256 = (args: ToolCallArgs): string => createHash('sha256').update(JSON.stringify(canonical(args))).digest('hex');

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

// ---------------------------------------------------------------------------------------------
// Approval (approval.md): an ask call waits for a person, is bound to its digest, runs once.

/** A memory.forget asked under `--ask-agent`: its tool/invoke still pending until a decision. */
interface Asked {
  key: string;
  content: string;
  toolCallId: string;
  args: ToolCallArgs;
  digest: string;
  /** The pending tool/invoke's outcome, and whether it has come. */
  pending: Promise<Outcome<ToolResponse>>;
  answered: () => boolean;
}

async function askSession(ctx: Context): Promise<string> {
  if (!ctx.askAgent) throw new Skip('needs --ask-agent NAME, a profile of the daemon under test whose approval.ask includes memory.forget');
  if (ctx.askSession) return ctx.askSession;
  const r = ok(await ctx.a.call(P.SessionOpenRequest, { auth: { type: 'bearer', token: ctx.tokenA }, agent: ctx.askAgent }), `session/open as agent ${ctx.askAgent}`);
  for (const action of ['memory.update', 'memory.read', 'memory.forget']) {
    expect(r.allowed_actions.includes(action), `agent ${ctx.askAgent} does not allow ${action} (${r.allowed_actions.join(', ')}); --ask-agent must name a profile allowing memory.* whose approval.ask includes memory.forget`);
  }
  ctx.askSession = r.session_id;
  return r.session_id;
}

/** The content user A's memory holds under `key` (undefined when there is none), read with the default profile. */
async function memoryContent(ctx: Context, key: string, toolCallId: string): Promise<unknown> {
  const read = await invoke(ctx, ctx.a, sessionA(ctx), ctx.thread, toolCallId, { module: 'memory', method: 'read', input: { key } });
  if (read.response.status !== 'success') fail(`memory.read of ${key} did not succeed: ${brief(text(read.response), 300)}`);
  return ((body(read.response).data?.items ?? []) as Array<{ key?: unknown; content?: unknown }>).find((m) => m.key === key)?.content;
}

/**
 * Saves a fresh memory (default profile), then asks to forget it under `--ask-agent` without waiting for the
 * answer: the tool/approval for it must come, and the tool/invoke must not answer before a decision.
 */
async function askForget(ctx: Context, label: string): Promise<Asked> {
  const s = await askSession(ctx);
  const key = `conformance-${ctx.run}-ask-${label}`;
  const content = `kept unless approved ${ctx.run}`;
  await succeed(ctx, ctx.a, sessionA(ctx), ctx.thread, `call-${ctx.run}-ask-${label}-save`, { module: 'memory', method: 'update', input: { key, content } });
  const toolCallId = `call-${ctx.run}-ask-${label}`;
  const args: ToolCallArgs = { module: 'memory', method: 'forget', input: { key } };
  const digest = argsSha256(args);
  const from = ctx.a.received.length;
  let answered = false;
  const pending = ctx.a.call(P.ToolInvokeRequest, { session_id: s, thread_id: ctx.thread, tool_call_id: toolCallId, args }).then((o) => {
    answered = true;
    return o;
  });
  const approvalOf = () =>
    ctx.a.received.find((r) => r.seq > from && r.message.method === 'tool/approval' && (r.message.params as Loose)?.tool_call_id === toolCallId)?.message.params as Loose;
  await ctx.a.waitFor(() => answered || approvalOf() !== undefined, ctx.waitMs);
  if (answered) {
    const o = await pending;
    fail(`tool/invoke of memory.forget under ${ctx.askAgent} answered before any decision (approval.ask must make it wait): ${o.ok ? brief(text(o.result), 300) : brief(o.error)}`);
  }
  const approval = approvalOf() ?? fail(`no tool/approval notification for ${toolCallId} within ${ctx.waitMs} ms`);
  expectSame(approval.thread_id, ctx.thread, 'tool/approval thread_id');
  expectSame(approval.action, 'memory.forget', 'tool/approval action');
  expectSame(approval.tool_call_args, args, 'tool/approval tool_call_args');
  expectSame(approval.args_sha256, digest, 'tool/approval args_sha256 (SHA-256 of the canonical JSON of args)');
  return { key, content, toolCallId, args, digest, pending, answered: () => answered };
}

/** Asserts the asked call has not run: still awaiting approval, its memory untouched, its tool/invoke unanswered. */
async function expectWaiting(ctx: Context, asked: Asked, when: string): Promise<void> {
  const key = { session_id: await askSession(ctx), thread_id: ctx.thread, tool_call_id: asked.toolCallId };
  const got = ok(await ctx.a.call(P.CallGetRequest, key), `call/get ${when}`);
  expectSame(got.state, 'awaiting_approval', `call/get state ${when}`);
  expectSame(got.args_sha256, asked.digest, `call/get args_sha256 ${when}`);
  // Listed among the user's calls awaiting approval, as its tool/approval carried it.
  const listed = ok(await ctx.a.call(P.CallListRequest, { session_id: key.session_id, limit: 100 }), `call/list ${when}`);
  const item = listed.calls.find((c) => c.thread_id === ctx.thread && c.tool_call_id === asked.toolCallId);
  expect(item, `call/list ${when} does not list ${asked.toolCallId}, a call awaiting approval`);
  expectSame([item.action, item.args_sha256, item.tool_call_args], ['memory.forget', asked.digest, asked.args], `call/list's item for ${asked.toolCallId} ${when}`);
  expectSame(await memoryContent(ctx, asked.key, `${asked.toolCallId}-read-${ctx.a.received.length}`), asked.content, `the memory memory.forget would remove, ${when} (nothing may run before approval)`);
  expect(!asked.answered(), `the pending tool/invoke answered ${when}, before any approval`);
}

export const CHECKS: Check[] = [
  {
    name: 'lifecycle: any request before initialize is answered -32002',
    section: 'transports.md#lifecycle',
    async run({ a }) {
      rpcError(await a.request('thread/list', { session_id: 'none' }), RpcErrorCode.NotInitialized, 'thread/list before initialize');
      rpcError(await a.request('no/such-method', {}), RpcErrorCode.NotInitialized, 'an unknown method before initialize');
    },
  },
  {
    name: 'initialize: protocol_version "1", server_info, one tool project_cli with a thin input schema; unknown params ignored',
    section: 'transports.md#lifecycle',
    async run({ a }) {
      // A newer host's fields (at the top and in client_info) must be ignored, not refused.
      const params = { protocol_version: '1', client_info: { name: 'toolgate-conformance', version: '1', platform: 'any' }, x_conformance_future: { any: 1 } };
      const r = ok(await a.request('initialize', params) as Outcome<P.InitializeResult>, 'initialize with unknown params');
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
    name: 'lifecycle: a second initialize on the connection is -32600',
    section: 'transports.md#lifecycle',
    async run({ a }) {
      rpcError(await a.call(P.InitializeRequest, { protocol_version: '1' }), RpcErrorCode.InvalidRequest, 'a second initialize');
    },
  },
  {
    name: 'errors: an unknown method after initialize is -32601',
    section: 'methods.md#errors',
    async run({ a }) {
      rpcError(await a.request('no/such-method', {}), RpcErrorCode.MethodNotFound, 'an unknown method after initialize');
    },
  },
  {
    name: 'framing: a body that is not JSON is -32700, one that is not a JSON-RPC message -32600, both with id null',
    section: 'transports.md#transports',
    async run({ a, settleMs }) {
      const answered = async (body: string, code: number, what: string) => {
        const from = a.received.length;
        await a.transport.sendRaw(body);
        const nullId = () => a.received.slice(from).find((r) => r.message.id === null && 'error' in r.message);
        await a.waitFor(() => nullId() !== undefined, settleMs * 10);
        const got = nullId();
        expect(got, `${what}: no error with id null came back`);
        const e = got.message.error as { code?: unknown };
        expectSame(e.code, code, `${what}: error code`);
      };
      await answered('{"jsonrpc":"2.0","id":1,"method":', RpcErrorCode.ParseError, 'a body that is not JSON');
      await answered('[]', RpcErrorCode.InvalidRequest, 'an empty batch array');
    },
  },
  {
    name: 'session/open: a wrongly signed bearer token is -32001 and the error does not echo it',
    section: 'transports.md#sessions-and-authentication',
    async run({ a, tokenA }) {
      const bad = tamper(tokenA);
      const e = rpcError(await a.call(P.SessionOpenRequest, { auth: { type: 'bearer', token: bad } }), RpcErrorCode.Unauthorized, 'session/open with a tampered token');
      const piece = leaks(e, bad);
      expect(piece === undefined, `the error carries a piece of the token (${JSON.stringify(piece)}): not even part of it may be echoed`);
    },
  },
  {
    name: 'session/open: a token without exp, and an expired one, are -32001 (needs --secret)',
    section: 'transports.md#sessions-and-authentication',
    async run(ctx) {
      if (!ctx.secret) throw new Skip('needs --secret, the HS256 bearer secret, to mint such tokens');
      const now = Math.floor(Date.now() / 1000);
      const sub = `conformance-${ctx.run}-x`;
      const cases: Array<[string, Record<string, unknown>]> = [
        ['a token without exp', { sub, iat: now }],
        ['an expired token', { sub, iat: now - 7200, exp: now - 3600 }],
      ];
      for (const [what, claims] of cases) {
        const token = mintToken(ctx.secret, claims);
        const e = rpcError(await ctx.a.call(P.SessionOpenRequest, { auth: { type: 'bearer', token } }), RpcErrorCode.Unauthorized, `session/open with ${what}`);
        expect(leaks(e, token) === undefined, `the error for ${what} carries a piece of the token`);
      }
      const good = mintToken(ctx.secret, { sub, iat: now, exp: now + 600 });
      const r = ok(await ctx.a.call(P.SessionOpenRequest, { auth: { type: 'bearer', token: good } }), 'session/open with a token the runner minted');
      expectSame(r.user_id, sub, 'user_id of the minted token');
    },
  },
  {
    name: 'session/open: opens a session for the token\'s user',
    section: 'transports.md#sessions-and-authentication',
    async run(ctx) {
      const r = ok(await ctx.a.call(P.SessionOpenRequest, { auth: { type: 'bearer', token: ctx.tokenA } }), 'session/open');
      if (typeof r.session_id === 'string' && r.session_id.length > 0) ctx.sessionA = r.session_id;
      expect(typeof r.session_id === 'string' && r.session_id.length > 0, `session_id is missing or empty: ${brief(r.session_id)}`);
      expect(typeof r.user_id === 'string' && r.user_id.length > 0, `user_id is missing or empty: ${brief(r.user_id)}`);
      const sub = subjectOf(ctx.tokenA);
      if (sub !== undefined) expectSame(r.user_id, sub, 'user_id (the token\'s sub)');
    },
  },
  {
    name: 'session/open: params naming another user than the token\'s are -32602; the token alone says who',
    section: 'transports.md#sessions-and-authentication',
    async run(ctx) {
      const other = `someone-else-${ctx.run}`;
      rpcError(
        await ctx.a.request('session/open', { auth: { type: 'bearer', token: ctx.tokenA }, user_id: other }),
        RpcErrorCode.InvalidParams,
        'session/open with a user_id beside the token',
      );
      rpcError(
        await ctx.a.request('session/open', { auth: { type: 'bearer', token: ctx.tokenA, sub: other } }),
        RpcErrorCode.InvalidParams,
        'session/open with a sub inside auth',
      );
    },
  },
  {
    name: 'session/open: an unknown agent is UNKNOWN_AGENT; enabled_skills narrows, never widens',
    section: 'transports.md#sessions-and-authentication',
    async run(ctx) {
      const auth = { type: 'bearer' as const, token: ctx.tokenA };
      rpcError(await ctx.a.call(P.SessionOpenRequest, { auth, agent: `no-such-agent-${ctx.run}` }), RpcErrorCode.InvalidParams, 'an unknown agent', 'UNKNOWN_AGENT');
      rpcError(
        await ctx.a.call(P.SessionOpenRequest, { auth, enabled_skills: [`no-such-skill-${ctx.run}`] }),
        RpcErrorCode.InvalidParams,
        'enabled_skills naming a skill the profile does not enable',
        'SKILL_NOT_ENABLED',
      );
      const full = ok(await ctx.a.call(P.SessionOpenRequest, { auth }), 'session/open');
      if (full.enabled_skills.length < 2) throw new Skip(`the default profile enables ${full.enabled_skills.length} skill(s): nothing to narrow`);
      const last = full.enabled_skills.at(-1)!;
      const narrowed = ok(await ctx.a.call(P.SessionOpenRequest, { auth, enabled_skills: [last] }), `session/open narrowed to ${last}`);
      expectSame(narrowed.enabled_skills, [last], 'enabled_skills of the narrowed session');
      const listed = ok(await ctx.a.call(P.SkillsListRequest, { session_id: narrowed.session_id }), 'skills/list of the narrowed session');
      expectSame(listed.skills.map((k) => k.name), [last], 'skills/list of the narrowed session');
      rpcError(
        await ctx.a.call(P.SkillsReadRequest, { session_id: narrowed.session_id, name: full.enabled_skills[0]! }),
        RpcErrorCode.InvalidParams,
        'skills/read of a skill narrowed away',
        'SKILL_NOT_FOUND',
      );
    },
  },
  {
    name: 'agent profiles: a narrower profile (--agent) refuses an action it does not allow with ACTION_NOT_ALLOWED',
    section: 'transports.md#sessions-and-authentication',
    async run(ctx) {
      if (!ctx.agent) throw new Skip('needs --agent NAME, a profile of the daemon under test that allows fewer actions');
      const r = ok(await ctx.a.call(P.SessionOpenRequest, { auth: { type: 'bearer', token: ctx.tokenA }, agent: ctx.agent }), `session/open as agent ${ctx.agent}`);
      const all = Object.keys(ACTION_DATA).sort();
      const missing = all.find((n) => !r.allowed_actions.includes(n));
      if (!missing) fail(`agent ${ctx.agent} allows every action (${r.allowed_actions.join(', ')}); --agent must name a narrower profile`);
      expect(r.allowed_actions.every((n, i, l) => i === 0 || l[i - 1]! < n), `allowed_actions is not sorted: ${brief(r.allowed_actions)}`);
      const [module, method] = missing.split('.') as [string, string];
      const call = await invoke(ctx, ctx.a, r.session_id, ctx.thread, `call-${ctx.run}-not-allowed`, { module, method, input: {} });
      const final = await expectStream(ctx, ctx.a, call);
      const error = final.error as { code?: unknown; allowed_actions?: unknown } | undefined;
      expectSame(error?.code, 'ACTION_NOT_ALLOWED', `error.code of ${missing} under agent ${ctx.agent}`);
      expectSame(error?.allowed_actions, r.allowed_actions, 'error.allowed_actions');
    },
  },
  {
    name: 'tool/invoke: an unknown session_id is -32001',
    section: 'transports.md#lifecycle',
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
    section: 'tool-protocol.md#toolinvoke',
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
    section: 'notifications.md#toolresult-notifications',
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
    section: 'tool-protocol.md#toolinvoke',
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
    section: 'methods.md#threads-history-and-messages',
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
    section: 'methods.md#threads-history-and-messages',
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
    section: 'tool-protocol.md#idempotency-and-exactly-once',
    async run(ctx) {
      const first = ctx.first ?? fail('needs the first call');
      const s = sessionA(ctx);
      const before = await toolMessages(ctx, ctx.a, s, ctx.thread, 'context');
      const call = await invoke(ctx, ctx.a, s, ctx.thread, first.toolCallId, first.args);
      const again = call.response;
      expectSame(text(again), text(first.response), 'the repeated call\'s text');
      // notifications.md: a replay sends its stored notifications again, before the response.
      const final = await expectStream(ctx, ctx.a, call);
      const { seq: _seq, ...replayed } = final;
      const { seq: _firstSeq, ...live } = first.final;
      expectSame(replayed, live, 'the replayed final notification vs the live one');
      const after = await toolMessages(ctx, ctx.a, s, ctx.thread, 'context');
      expectSame(after.all.length, before.all.length, 'message count after the repeat');
    },
  },
  {
    name: 'idempotency: the same tool_call_id with other args is a failure DUPLICATE_TOOL_CALL_ID, the stored call untouched',
    section: 'tool-protocol.md#idempotency-and-exactly-once',
    async run(ctx) {
      const first = ctx.first ?? fail('needs the first call');
      const s = sessionA(ctx);
      const before = { seq: ctx.a.received.length };
      const outcome = await ctx.a.call(P.ToolInvokeRequest, { session_id: s, thread_id: ctx.thread, tool_call_id: first.toolCallId, args: memoryArgs(ctx, 'something else') });
      const r = ok(outcome, 'tool/invoke with a reused id');
      expectSame(r.status, 'failure', 'status');
      const body = JSON.parse(text(r)) as { status?: unknown; error?: { code?: unknown } };
      expectSame(body.error?.code, 'DUPLICATE_TOOL_CALL_ID', 'error.code');
      // notifications.md: the answer is preceded by one final failure notification.
      const ofCall = (n: Record<string, unknown>) => n.tool_call_id === first.toolCallId && n.thread_id === ctx.thread;
      const early = ctx.a.toolResults(before.seq, outcome.seq).filter(ofCall);
      expect(early.length === 1, `expected one tool/result notification before the DUPLICATE_TOOL_CALL_ID answer, got ${early.length}`);
      expectSame([early[0]!.final, early[0]!.status, (early[0]!.error as { code?: unknown } | undefined)?.code], [true, 'failure', 'DUPLICATE_TOOL_CALL_ID'], 'its final/status/error.code');
      expect(early[0]!.ui_schema === undefined, 'a DUPLICATE_TOOL_CALL_ID failure carries a ui_schema');
      const { tools } = await toolMessages(ctx, ctx.a, s, ctx.thread, 'context');
      const mine = tools.filter((m) => m.tool_call_id === first.toolCallId);
      expect(mine.length === 1 && mine[0]!.content === text(first.response), 'the stored tool message changed');
    },
  },
  {
    name: 'tool failures: a successful response with status failure and a structured error {code, message, module, method}',
    section: 'methods.md#errors',
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
      const published = publishedInputSchema(ctx, 'calendar.create');
      if (published !== undefined) expectSame(body.error.input_schema, published, 'error.input_schema vs schemas/action-inputs.json#/$defs/calendar.create');
      const invalidFinal = await expectStream(ctx, ctx.a, invalid);
      expect(invalidFinal.ui_schema === undefined, 'a failure carries a ui_schema');
    },
  },
  {
    name: `batch: one partial notification per item, in order, then the final one (an invalid item fails alone)`,
    section: 'tool-protocol.md#batches',
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
        expect(n.ui_schema !== undefined, `item ${i}'s notification carries no ui_schema (event_batch_item, for ok and failed items)`);
      });
      expectUi(final, true, 'a batch (event_batch)');
      // notifications.md: a replay sends the stored stream again, partials included, before the response.
      const replay = await invoke(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-batch`, args);
      await expectStream(ctx, ctx.a, replay);
      const strip = (list: Array<Record<string, unknown>>) => list.map(({ seq: _seq, ...n }) => n);
      expectSame(strip(replay.early), strip(early), 'the replayed batch\'s notifications vs the live ones');
      expectSame(text(replay.response), text(response), 'the replayed batch\'s text');
      expectSame(response.status, 'partial', 'final status with one failed item');
      const data = (final.result as { data?: unknown } | undefined)?.data as { created?: unknown; failed?: unknown } | undefined;
      expectSame([data?.created, data?.failed], [2, 1], 'created/failed');
      const problems = ctx.validator.check('CalendarBatchData', data);
      expect(problems.length === 0, `batch data does not match CalendarBatchData: ${problems.join('; ')}`);
    },
  },
  {
    name: `batch: more than ${BATCH_MAX_ITEMS} items is INVALID_ACTION_INPUT before anything runs`,
    section: 'tool-protocol.md#batches',
    async run(ctx) {
      const title = `conformance ${ctx.run} too many`;
      const items = Array.from({ length: BATCH_MAX_ITEMS + 1 }, (_, i) => event(10 + (i % 10), 1 + (i % 20), title));
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
      const read = await succeed(ctx, ctx.a, sessionA(ctx), ctx.thread, `call-${ctx.run}-toobig-read`, {
        module: 'calendar',
        method: 'read',
        input: { mode: 'range', start_at: '2031-03-10T00:00:00+00:00', end_at: '2031-03-20T00:00:00+00:00' },
      });
      const created = ((read.data?.items ?? []) as Array<{ title?: unknown }>).filter((e) => e.title === title).length;
      expectSame(created, 0, 'events of the refused batch found by calendar.read');
    },
  },
  {
    name: 'calendar: a created event reads back by id and by day; update changes what reads back; each carries its ui_schema',
    section: 'ui-schema.md#which-calls-carry-a-ui_schema',
    async run(ctx) {
      const s = sessionA(ctx);
      const title = `conformance ${ctx.run} single`;
      const input = event(21, 9, title);
      const created = await succeed(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-create`, { module: 'calendar', method: 'create', input });
      expectUi(created.final, true, 'calendar.create (event, created)');
      const id = created.data?.event?.id as string | undefined;
      expect(typeof id === 'string' && id.length > 0, `calendar.create returned no event id: ${brief(created.data)}`);
      ctx.event = { id, title };
      expectSame([created.data.event.title, created.data.event.start_at, created.data.event.end_at], [title, input.start_at, input.end_at], 'the created event');
      const byId = await succeed(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-read-id`, { module: 'calendar', method: 'read', input: { mode: 'event', event_id: id } });
      expectUi(byId.final, true, 'calendar.read (event_list)');
      expectSame((byId.data?.items ?? []).map((e: { id?: unknown }) => e.id), [id], 'calendar.read by id');
      expectSame(byId.data.items[0], created.data.event, 'the event read back vs the one created');
      const byDay = await succeed(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-read-day`, { module: 'calendar', method: 'read', input: { mode: 'day', date: '2031-03-21' } });
      expect((byDay.data?.items ?? []).some((e: { id?: unknown }) => e.id === id), 'calendar.read of its day does not list the created event');
      expectSame(byDay.data.count, byDay.data.items.length, 'count vs items');
      const newTitle = `${title} (moved)`;
      const updated = await succeed(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-update`, { module: 'calendar', method: 'update', input: { event_id: id, title: newTitle } });
      expectUi(updated.final, true, 'calendar.update (event, updated)');
      expectSame(updated.data?.event?.title, newTitle, 'the updated event\'s title');
      const again = await succeed(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-read-id-2`, { module: 'calendar', method: 'read', input: { mode: 'event', event_id: id } });
      expectSame(again.data?.items?.[0]?.title, newTitle, 'the title read back after calendar.update');
      ctx.event = { id, title: newTitle };
    },
  },
  {
    name: 'memory: update reads back, forget removes it; memory.read and memory.forget carry no ui_schema',
    section: 'ui-schema.md#which-calls-carry-a-ui_schema',
    async run(ctx) {
      const s = sessionA(ctx);
      const key = `conformance-${ctx.run}-kept`;
      const content = `read me back ${ctx.run}`;
      const saved = await succeed(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-mem-update`, { module: 'memory', method: 'update', input: { key, content } });
      expectUi(saved.final, true, 'memory.update (memory_saved)');
      const read = await succeed(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-mem-read`, { module: 'memory', method: 'read', input: { key } });
      expectUi(read.final, false, 'memory.read');
      expectSame((read.data?.items ?? []).map((m: { key?: unknown; content?: unknown }) => [m.key, m.content]), [[key, content]], 'memory.read of the key just saved');
      const forgot = await succeed(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-mem-forget`, { module: 'memory', method: 'forget', input: { key } });
      expectUi(forgot.final, false, 'memory.forget');
      expectSame([forgot.data?.key, forgot.data?.forgotten], [key, true], 'memory.forget data');
      const after = await invoke(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-mem-read-2`, { module: 'memory', method: 'read', input: { key } });
      const left = body(after.response);
      const still = after.response.status === 'success' && (left.data?.items ?? []).some((m: { key?: unknown }) => m.key === key);
      expect(!still, `memory.read still finds the key after memory.forget: ${brief(left)}`);
    },
  },
  {
    name: 'calendar: share, accept_invite and reject_invite read back for the invitee (needs --token-b)',
    section: 'ui-schema.md#which-calls-carry-a-ui_schema',
    async run(ctx) {
      if (!ctx.tokenB) throw new Skip('needs --token-b');
      const s = sessionA(ctx);
      const ev = ctx.event ?? fail('needs the event the calendar check created');
      const b = ok(await ctx.a.call(P.SessionOpenRequest, { auth: { type: 'bearer', token: ctx.tokenB } }), 'session/open for user B');
      ctx.userB = b.user_id;
      const bThread = `${ctx.thread}-b`;
      const share = async (eventId: string, n: number) => {
        const r = await succeed(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-share-${n}`, { module: 'calendar', method: 'share', input: { event_id: eventId, user_ids: [b.user_id] } });
        expectUi(r.final, true, 'calendar.share (event_shared)');
        const invite = (r.data?.invites ?? []).find((i: { user_id?: unknown }) => i.user_id === b.user_id) as { invite_id?: string; status?: unknown } | undefined;
        expect(invite && typeof invite.invite_id === 'string', `calendar.share made no invite for B: ${brief(r.data)}`);
        expectSame(invite.status, 'pending', 'the new invite\'s status');
        return invite.invite_id!;
      };
      const first = await share(ev.id, 1);
      const accepted = await succeed(ctx, ctx.a, b.session_id, bThread, `call-${ctx.run}-accept`, { module: 'calendar', method: 'accept_invite', input: { invite_id: first } });
      expectUi(accepted.final, true, 'calendar.accept_invite (invite_status)');
      expectSame([accepted.data?.invite?.invite_id, accepted.data?.invite?.event_id, accepted.data?.invite?.status], [first, ev.id, 'accepted'], 'the accepted invite');
      const seen = await succeed(ctx, ctx.a, b.session_id, bThread, `call-${ctx.run}-b-read`, { module: 'calendar', method: 'read', input: { mode: 'event', event_id: ev.id } });
      expectSame(seen.data?.items?.[0]?.title, ev.title, 'the shared event as B reads it');
      const other = await succeed(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-create-2`, { module: 'calendar', method: 'create', input: event(22, 9, `conformance ${ctx.run} declined`) });
      const second = await share(other.data.event.id as string, 2);
      const rejected = await succeed(ctx, ctx.a, b.session_id, bThread, `call-${ctx.run}-reject`, { module: 'calendar', method: 'reject_invite', input: { invite_id: second } });
      expectUi(rejected.final, true, 'calendar.reject_invite (invite_status)');
      expectSame(rejected.data?.invite?.status, 'rejected', 'the rejected invite\'s status');
      const conflict = await invoke(ctx, ctx.a, b.session_id, bThread, `call-${ctx.run}-accept-rejected`, { module: 'calendar', method: 'accept_invite', input: { invite_id: first } });
      expectSame(conflict.response.status, 'success', 'accepting an accepted invite again (idempotent)');
    },
  },
  {
    name: 'calendar: delete answers event_deleted, and the event no longer reads back',
    section: 'ui-schema.md#which-calls-carry-a-ui_schema',
    async run(ctx) {
      const s = sessionA(ctx);
      const ev = ctx.event ?? fail('needs the event the calendar check created');
      const deleted = await succeed(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-delete`, { module: 'calendar', method: 'delete', input: { event_id: ev.id } });
      expectUi(deleted.final, true, 'calendar.delete (event_deleted)');
      expectSame([deleted.data?.event_id, deleted.data?.deleted], [ev.id, true], 'calendar.delete data');
      const gone = await invoke(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-read-deleted`, { module: 'calendar', method: 'read', input: { mode: 'event', event_id: ev.id } });
      const b = body(gone.response);
      expect(gone.response.status === 'failure' && b.error?.code === 'NOT_FOUND', `calendar.read of the deleted event: expected failure NOT_FOUND, got ${brief(b)}`);
    },
  },
  {
    name: 'contacts.read: ContactsReadData with its contact_list ui_schema; a user\'s phone finds exactly them (needs --secret)',
    section: 'ui-schema.md#which-calls-carry-a-ui_schema',
    async run(ctx) {
      const s = sessionA(ctx);
      const list = await succeed(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-contacts`, { module: 'contacts', method: 'read', input: {} });
      expectUi(list.final, true, 'contacts.read (contact_list)');
      expectSame(list.data?.count, (list.data?.items ?? []).length, 'count vs items');
      if (!ctx.secret) throw new Skip('the phone look-up needs --secret, to mint a user with a phone');
      const digits = String(parseInt(ctx.run, 16) % 10_000_000).padStart(7, '0');
      const phone = `+1555${digits}`;
      const sub = `conformance-${ctx.run}-phone`;
      const now = Math.floor(Date.now() / 1000);
      const token = mintToken(ctx.secret, { sub, phone, name: 'Conformance Phone', iat: now, exp: now + 600 });
      ok(await ctx.a.call(P.SessionOpenRequest, { auth: { type: 'bearer', token } }), 'session/open for a user with a phone');
      const found = await succeed(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-contacts-phone`, { module: 'contacts', method: 'read', input: { phone } });
      expectSame((found.data?.items ?? []).map((c: { user_id?: unknown; phone?: unknown }) => [c.user_id, c.phone]), [[sub, phone]], 'contacts.read by phone');
    },
  },
  {
    name: 'credentials: a token in message/append is -32602 CREDENTIAL_REFUSED, in tool input a failure UNAUTHENTICATED; nothing stored',
    section: 'security.md#what-each-boundary-refuses',
    async run(ctx) {
      const s = sessionA(ctx);
      const before = await toolMessages(ctx, ctx.a, s, ctx.thread, 'context');
      rpcError(
        await ctx.a.call(P.MessageAppendRequest, { session_id: s, thread_id: ctx.thread, role: 'user', content: `my token is ${ctx.tokenA} ok` }),
        RpcErrorCode.InvalidParams,
        'message/append carrying the bearer token',
        'CREDENTIAL_REFUSED',
      );
      const key = `conformance-${ctx.run}-secret`;
      const id = `call-${ctx.run}-secret`;
      const call = await invoke(ctx, ctx.a, s, ctx.thread, id, { module: 'memory', method: 'update', input: { key, content: `token ${ctx.tokenA}` } });
      expectSame([call.response.status, body(call.response).error?.code], ['failure', 'UNAUTHENTICATED'], 'a tool input carrying the bearer token: status, error.code');
      await expectStream(ctx, ctx.a, call);
      const after = await toolMessages(ctx, ctx.a, s, ctx.thread, 'context');
      expectSame(after.all.map((m) => m.id), before.all.map((m) => m.id), 'the thread\'s messages after both refusals (nothing stored)');
      const read = await invoke(ctx, ctx.a, s, ctx.thread, `call-${ctx.run}-secret-read`, { module: 'memory', method: 'read', input: { key } });
      const stored = read.response.status === 'success' && (body(read.response).data?.items ?? []).length > 0;
      expect(!stored, 'the refused memory.update stored its memory');
    },
  },
  {
    name: 'message/append: messages land in history, paged with before; worker_output with an unknown key is -32602',
    section: 'methods.md#threads-history-and-messages',
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
      const all = ok(await ctx.a.call(P.HistoryGetRequest, { session_id: s, thread_id: ctx.thread, view: 'ui', limit: 500 }), 'history/get of the whole thread');
      const older = ok(await ctx.a.call(P.HistoryGetRequest, { session_id: s, thread_id: ctx.thread, view: 'ui', limit: 2, before: page.next_before! }), 'history/get with before');
      const ids = all.messages.map((m) => m.id);
      expectSame(older.messages.map((m) => m.id), ids.slice(-4, -2), 'the page before next_before (the two messages before the newest two)');
      expectSame(older.next_before, ids.length > 4 ? ids.at(-4) : null, 'next_before of the older page');
      rpcError(
        await ctx.a.request('message/append', { session_id: s, thread_id: ctx.thread, role: 'assistant', content: 'x', worker_output: { ...workerOutput, ui_hints: {} } }),
        RpcErrorCode.InvalidParams,
        'worker_output with ui_hints',
      );
    },
  },
  {
    name: 'limits: history/get and thread/list refuse a limit outside 1..500 with -32602',
    section: 'methods.md#errors',
    async run(ctx) {
      const s = sessionA(ctx);
      for (const limit of [0, 501]) {
        rpcError(await ctx.a.request('history/get', { session_id: s, thread_id: ctx.thread, limit }), RpcErrorCode.InvalidParams, `history/get with limit ${limit}`);
        rpcError(await ctx.a.request('thread/list', { session_id: s, limit }), RpcErrorCode.InvalidParams, `thread/list with limit ${limit}`);
      }
    },
  },
  {
    name: 'history/get of a thread that does not exist is -32602 THREAD_NOT_FOUND',
    section: 'methods.md#threads-history-and-messages',
    async run(ctx) {
      const outcome = await ctx.a.call(P.HistoryGetRequest, { session_id: sessionA(ctx), thread_id: `never-${ctx.run}` });
      rpcError(outcome, RpcErrorCode.InvalidParams, 'history/get of an unknown thread', 'THREAD_NOT_FOUND');
    },
  },
  {
    name: 'thread/list: the user\'s threads, most recent first, with message counts',
    section: 'methods.md#threads-history-and-messages',
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
    section: 'methods.md#skills',
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
    name: 'thread/subscribe on the calling connection (stdio too): each notification once; subscribing writes nothing',
    section: 'notifications.md#subscriptions-and-disconnects',
    async run(ctx) {
      const s = sessionA(ctx);
      expectSame(ok(await ctx.a.call(P.ThreadSubscribeRequest, { session_id: s, thread_id: ctx.thread }), 'thread/subscribe'), { thread_id: ctx.thread, subscribed: true }, 'thread/subscribe result');
      const id = `call-${ctx.run}-self-watched`;
      const call = await invoke(ctx, ctx.a, s, ctx.thread, id, memoryArgs(ctx, 'self-watched'));
      await expectStream(ctx, ctx.a, call);
      await ctx.a.waitFor(() => false, ctx.settleMs);
      const count = ctx.a.toolResults(0).filter((n) => n.tool_call_id === id).length;
      expectSame(count, 1, 'tool/result notifications of the call on its subscribed connection (each connection once)');
      expectSame(ok(await ctx.a.call(P.ThreadUnsubscribeRequest, { session_id: s, thread_id: ctx.thread }), 'thread/unsubscribe'), { thread_id: ctx.thread, subscribed: false }, 'thread/unsubscribe result');
      const unused = `${ctx.thread}-watched-only`;
      ok(await ctx.a.call(P.ThreadSubscribeRequest, { session_id: s, thread_id: unused }), 'thread/subscribe of an unused thread');
      rpcError(await ctx.a.call(P.HistoryGetRequest, { session_id: s, thread_id: unused }), RpcErrorCode.InvalidParams, 'history/get of a thread only subscribed to', 'THREAD_NOT_FOUND');
      ok(await ctx.a.call(P.ThreadUnsubscribeRequest, { session_id: s, thread_id: unused }), 'thread/unsubscribe of the unused thread');
    },
  },
  {
    name: 'thread/subscribe: another connection receives the thread\'s notifications; thread/unsubscribe stops them',
    section: 'notifications.md#subscriptions-and-disconnects',
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
    section: 'methods.md#threads-history-and-messages',
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
    name: 'call/get: a done call is done with the very response tool/invoke gave; call/cancel of it changes nothing; an unknown call is CALL_NOT_FOUND',
    section: 'methods.md#a-calls-lifecycle',
    async run(ctx) {
      const first = ctx.first ?? fail('needs the first call');
      const s = sessionA(ctx);
      const key = { session_id: s, thread_id: ctx.thread, tool_call_id: first.toolCallId };
      const got = ok(await ctx.a.call(P.CallGetRequest, key), 'call/get of the first call');
      expectSame(got.state, 'done', 'call/get state');
      expectSame(got.outcome, first.response, 'call/get outcome vs the tool/invoke response');
      expectSame(got.action, `${first.args.module}.${first.args.method}`, 'call/get action');
      expectSame(got.args_sha256, argsSha256(first.args), 'call/get args_sha256 (SHA-256 of the canonical JSON of args)');
      const cancelled = ok(await ctx.a.call(P.CallCancelRequest, key), 'call/cancel of a done call');
      expectSame(cancelled, { state: 'done', outcome: first.response }, 'call/cancel of a done call');
      rpcError(await ctx.a.call(P.CallGetRequest, { ...key, tool_call_id: `never-${ctx.run}` }), RpcErrorCode.InvalidParams, 'call/get of a call never made', 'CALL_NOT_FOUND');
      rpcError(await ctx.a.call(P.CallCancelRequest, { ...key, tool_call_id: `never-${ctx.run}` }), RpcErrorCode.InvalidParams, 'call/cancel of a call never made', 'CALL_NOT_FOUND');
    },
  },
  {
    name: 'call/get and call/cancel: another user\'s call is CALL_NOT_FOUND, as if it did not exist (needs --token-b)',
    section: 'methods.md#a-calls-lifecycle',
    async run(ctx) {
      if (!ctx.tokenB) throw new Skip('needs --token-b');
      const first = ctx.first ?? fail('needs the first call');
      const b = ctx.sessionB ?? ok(await ctx.a.call(P.SessionOpenRequest, { auth: { type: 'bearer', token: ctx.tokenB } }), 'session/open for user B').session_id;
      // A thread of B's own under the same id holds B's call of the same id (the isolation check made it): ask for another.
      const key = { session_id: b, thread_id: `${ctx.thread}-a-only`, tool_call_id: first.toolCallId };
      const aKey = { session_id: sessionA(ctx), thread_id: key.thread_id, tool_call_id: `only-a-${ctx.run}` };
      await invoke(ctx, ctx.a, aKey.session_id, aKey.thread_id, aKey.tool_call_id, memoryArgs(ctx, 'only a'));
      ok(await ctx.a.call(P.CallGetRequest, aKey), 'A reading its own call');
      rpcError(await ctx.a.call(P.CallGetRequest, { ...aKey, session_id: key.session_id }), RpcErrorCode.InvalidParams, 'B reading A\'s call', 'CALL_NOT_FOUND');
      rpcError(await ctx.a.call(P.CallCancelRequest, { ...aKey, session_id: key.session_id }), RpcErrorCode.InvalidParams, 'B cancelling A\'s call', 'CALL_NOT_FOUND');
    },
  },
  {
    name: 'approval: an ask call (--ask-agent) waits: tool/approval with its args_sha256, call/get awaiting_approval, nothing written; a wrong digest is ARGS_MISMATCH and changes nothing',
    section: 'approval.md#the-flow',
    async run(ctx) {
      const asked = await askForget(ctx, 'approve');
      ctx.asked = asked;
      await expectWaiting(ctx, asked, 'after tool/approval');
      const wrong = asked.digest.replace(/^./, (c) => (c === '0' ? '1' : '0'));
      const key = { session_id: await askSession(ctx), thread_id: ctx.thread, tool_call_id: asked.toolCallId };
      rpcError(await ctx.a.call(P.CallApproveRequest, { ...key, args_sha256: wrong }), RpcErrorCode.InvalidParams, 'call/approve with another digest', 'ARGS_MISMATCH');
      rpcError(await ctx.a.call(P.CallDenyRequest, { ...key, args_sha256: wrong }), RpcErrorCode.InvalidParams, 'call/deny with another digest', 'ARGS_MISMATCH');
      await expectWaiting(ctx, asked, 'after decisions with a wrong digest');
    },
  },
  {
    name: 'approval: call/approve runs it exactly once; the pending tool/invoke answers with its outcome; a second approve runs nothing again',
    section: 'approval.md#the-flow',
    async run(ctx) {
      const session = await askSession(ctx);
      const asked = ctx.asked ?? fail('needs the call the previous approval check asked');
      const key = { session_id: session, thread_id: ctx.thread, tool_call_id: asked.toolCallId, args_sha256: asked.digest };
      const approved = ok(await ctx.a.call(P.CallApproveRequest, key), 'call/approve with the call\'s digest');
      expectSame(approved.state, 'done', 'call/approve state');
      const response = ok(await asked.pending, 'the pending tool/invoke of the approved call');
      expectSame(approved.outcome, response, 'call/approve outcome vs the pending tool/invoke response');
      if (response.status !== 'success') fail(`the approved memory.forget did not succeed: ${brief(text(response), 300)}`);
      expectSame([body(response).data?.key, body(response).data?.forgotten], [asked.key, true], 'the approved memory.forget data');
      expectSame(await memoryContent(ctx, asked.key, `${asked.toolCallId}-read-approved`), undefined, 'the memory after the approved memory.forget');
      // Saved again: an approval that ran the call a second time would forget it again.
      const again = `saved again ${ctx.run}`;
      await succeed(ctx, ctx.a, sessionA(ctx), ctx.thread, `${asked.toolCallId}-save-again`, { module: 'memory', method: 'update', input: { key: asked.key, content: again } });
      const second = ok(await ctx.a.call(P.CallApproveRequest, key), 'a second call/approve of the decided call');
      expectSame(second, { state: 'done', outcome: response }, 'a second call/approve answers the stored outcome');
      const replay = ok(await ctx.a.call(P.ToolInvokeRequest, { session_id: key.session_id, thread_id: ctx.thread, tool_call_id: asked.toolCallId, args: asked.args }), 'tool/invoke again with the same id and args');
      expectSame(replay, response, 'tool/invoke again with the same id and args answers the stored outcome');
      expectSame(await memoryContent(ctx, asked.key, `${asked.toolCallId}-read-twice`), again, 'the memory saved again after the approved call (a call approved twice, or replayed, must not run twice)');
      const got = ok(await ctx.a.call(P.CallGetRequest, { session_id: key.session_id, thread_id: ctx.thread, tool_call_id: asked.toolCallId }), 'call/get of the approved call');
      expectSame([got.state, got.outcome], ['done', response], 'call/get of the approved call');
    },
  },
  {
    name: 'approval: call/deny ends an ask call as the failure APPROVAL_DENIED with the reason; nothing written',
    section: 'approval.md#what-the-model-sees',
    async run(ctx) {
      const asked = await askForget(ctx, 'deny');
      const reason = `not this memory ${ctx.run}`;
      const key = { session_id: await askSession(ctx), thread_id: ctx.thread, tool_call_id: asked.toolCallId };
      const denied = ok(await ctx.a.call(P.CallDenyRequest, { ...key, args_sha256: asked.digest, reason }), 'call/deny with the call\'s digest');
      expectSame(denied.state, 'done', 'call/deny state');
      const response = ok(await asked.pending, 'the pending tool/invoke of the denied call');
      expectSame(denied.outcome, response, 'call/deny outcome vs the pending tool/invoke response');
      const error = body(response).error as Loose;
      expectSame([response.status, error?.code, error?.reason], ['failure', 'APPROVAL_DENIED', reason], 'the denied call\'s status, error.code and error.reason');
      expectSame(await memoryContent(ctx, asked.key, `${asked.toolCallId}-read-denied`), asked.content, 'the memory a denied memory.forget would have removed');
      const late = ok(await ctx.a.call(P.CallApproveRequest, { ...key, args_sha256: asked.digest }), 'call/approve after the deny');
      expectSame(late, { state: 'done', outcome: response }, 'call/approve after the deny answers the denied outcome');
      expectSame(await memoryContent(ctx, asked.key, `${asked.toolCallId}-read-late`), asked.content, 'the memory after an approve that came after the deny');
    },
  },
  {
    name: 'shutdown: answers null, later requests are refused, exit ends the connection',
    section: 'transports.md#lifecycle',
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
    name: 'bytes: every text has its keys in the published order (status, module, method, data; error\'s code, message, module, method)',
    section: 'tool-protocol.md#bytes',
    async run(ctx) {
      const texts = ctx.texts ?? [];
      expect(texts.length > 0, 'no tool/invoke text was received');
      const problems: string[] = [];
      for (const { action, batch, text: raw } of texts) {
        const p = JSON.parse(raw) as Record<string, unknown>;
        const top = Object.keys(p);
        if (p.status === 'failure') {
          if (!isDeepEqualList(top, ['status', 'error'])) problems.push(`${action}: keys ${top.join(', ')}, expected status, error`);
          const keys = Object.keys((p.error ?? {}) as object);
          const at = keys.indexOf('code');
          if (!isDeepEqualList(keys.slice(at, at + 4), ['code', 'message', 'module', 'method'])) problems.push(`${action} error: keys ${keys.join(', ')}; code, message, module, method must come together in this order`);
          if (keys.includes('issues') && keys.indexOf('issues') > keys.indexOf('input_schema') && keys.includes('input_schema')) problems.push(`${action} error: issues must come before input_schema`);
          continue;
        }
        if (!isDeepEqualList(top, ['status', 'module', 'method', 'data'])) problems.push(`${action}: keys ${top.join(', ')}, expected status, module, method, data`);
        const dataId = batch ? 'CalendarBatchData' : (ACTION_DATA as Record<string, string>)[action];
        if (dataId) problems.push(...keyOrderProblems(ctx, { $ref: `#/$defs/${dataId}` }, p.data, `${action} data`));
      }
      if (problems.length > 0) fail(`${problems.length} text(s) off the published key order:\n${problems.slice(0, 8).map((x) => `  - ${x}`).join('\n')}`);
    },
  },
  {
    name: 'secrets: no message received carries a bearer token',
    section: 'security.md#logging-redaction-and-secrets',
    async run(ctx) {
      const tokens = [ctx.tokenA, ctx.tokenB].filter((t): t is string => !!t);
      for (const c of ctx.clients) {
        for (const r of c.received) {
          for (const t of tokens) {
            const piece = leaks(r.message, t);
            expect(piece === undefined, `message #${r.seq} carries a piece of a bearer token (${JSON.stringify(piece)})`);
          }
        }
      }
    },
  },
  {
    name: 'schemas: every message received matches schemas/',
    section: 'methods.md',
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
