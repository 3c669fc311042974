/**
 * The one dispatch layer both transports share: method name → params schema
 * → handler. It owns the connection-level rules (initialize first, shutdown
 * last, sessions bound to their connection), maps the services' domain
 * errors to JSON-RPC errors (errors.ts, one table) and turns unexpected
 * errors into -32603 without leaking their text.
 */
import { ResponseError, type CancellationToken } from 'vscode-jsonrpc';
import type { z } from 'zod';
import * as M from '../protocol/methods.js';
import type { RequestSpec } from '../protocol/methods.js';
import { RpcErrorCode, asWireError, invalidParams, unauthorized } from './errors.js';
import type { Services } from './services.js';
import type { Connection } from './connection.js';
import type { Session } from '../sessions/sessions.js';
import { openSession } from '../sessions/session-open.js';
import { cancelCall, getCall } from '../calls/call-service.js';
import { decideCall } from '../calls/approvals.js';
import { listCalls } from '../calls/call-list.js';
import { appendMessage, getHistory, threadList } from '../threads/history.js';
import { listSkills, readSkill } from '../sessions/skills.js';
import { initializeResult } from '../sessions/initialize.js';
import { constantTimeEqual } from '../auth/constant-time.js';
import type { Logger } from '../runtime/logger.js';
import { refuseSecretsInParams } from './secret-guard.js';
import { refuseMalformedStrings } from './string-guard.js';
import { echoName, scrubError } from '../codec/redact.js';
import { screenClean } from '../codec/screen.js';

export interface ConnectionState {
  initialized: boolean;
  shutdownRequested: boolean;
}

type Handler<S extends z.ZodType> = (ctx: {
  daemon: Services;
  conn: Connection;
  state: ConnectionState;
  params: z.infer<S>;
  token: CancellationToken;
  log: Logger;
  session: () => Session;
  /** The params' one walk found no token, secret, credential field or malformed string in them, `args` included. */
  screened: boolean;
}) => unknown;

interface MethodSpec<S extends z.ZodType = z.ZodType> {
  params: S;
  handler: Handler<S>;
}

/** `$/cancelRequest` as the AbortSignal the call service takes (a token cancelled already gives an aborted signal). */
function abortSignalOf(token: CancellationToken): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  if (token.isCancellationRequested) controller.abort();
  const listening = token.onCancellationRequested(() => controller.abort());
  return { signal: controller.signal, dispose: () => listening.dispose() };
}

/**
 * A request's handler, registered by the request's one declaration in
 * src/protocol/methods.ts (its wire name and params schema come from there:
 * "go to definition" on the spec reaches both). Params are parsed by that
 * schema before the handler runs.
 */
function on<M extends string, S extends z.ZodType>(spec: RequestSpec<M, S>, handler: Handler<S>): readonly [M, MethodSpec] {
  return [spec.method, { params: spec.params, handler } as unknown as MethodSpec];
}

/** Every request's handler, by its declaration. */
const HANDLERS = [
  on(M.Initialize, ({ daemon, conn, state, params }) => {
    if (state.initialized) throw new ResponseError(RpcErrorCode.InvalidRequest, 'already initialized');
    const serviceKey = daemon.env.TOOLGATE_SERVICE_KEY;
    if (params.service_key !== undefined) {
      if (!serviceKey || !constantTimeEqual(params.service_key, serviceKey)) throw unauthorized('invalid service key');
      conn.trusted = true;
    }
    state.initialized = true;
    return initializeResult(daemon);
  }),
  on(M.SessionOpen, ({ daemon, conn, params }) => openSession(daemon, conn, params)),
  on(M.ToolInvoke, async ({ daemon, conn, params, token, session, log, screened }) => {
    const call = { threadId: params.thread_id, toolCallId: params.tool_call_id, args: params.args, traceparent: params._meta?.traceparent, screened };
    const signal = abortSignalOf(token);
    try {
      return (await daemon.toolCalls.invoke(session(), call, { signal: signal.signal, to: conn, log })).response;
    } finally {
      signal.dispose();
    }
  }),
  // Threads are per user: subscribing watches the session user's thread of that id (which may not exist
  // yet) and creates nothing; another user's thread of the same id is never reached.
  on(M.ThreadSubscribe, async ({ daemon, conn, params, session }) => {
    const s = session();
    daemon.subscriptions.subscribe(s.userId, params.thread_id, conn, s.id);
    // Answered once the thread's position is read (on PostgreSQL: other daemons' calls reach us too).
    await daemon.threadEvents.ready(s.userId, params.thread_id);
    return { thread_id: params.thread_id, subscribed: true };
  }),
  on(M.ThreadUnsubscribe, ({ daemon, conn, params, session }) => {
    const s = session();
    daemon.subscriptions.unsubscribe(s.userId, params.thread_id, conn.id, s.id);
    return { thread_id: params.thread_id, subscribed: false };
  }),
  on(M.MessageAppend, ({ daemon, params, session }) => appendMessage(daemon, session(), params)),
  on(M.HistoryGet, ({ daemon, params, session }) => getHistory(daemon, session(), params)),
  on(M.ThreadList, ({ daemon, params, session }) => threadList(daemon, session(), params)),
  // A call of the session's user, from any of its connections (contract section 16).
  on(M.CallGet, ({ daemon, params, session }) => getCall(daemon, { userId: session().userId, threadId: params.thread_id, toolCallId: params.tool_call_id })),
  on(M.CallCancel, ({ daemon, params, session }) => cancelCall(daemon, { userId: session().userId, threadId: params.thread_id, toolCallId: params.tool_call_id })),
  // A person's decision on a call awaiting approval, bound to its args digest (contract section 17).
  on(M.CallApprove, ({ daemon, conn, params, session, log }) =>
    decideCall(
      daemon,
      { userId: session().userId, threadId: params.thread_id, toolCallId: params.tool_call_id },
      { argsSha256: params.args_sha256, decision: 'approve', surface: conn.transport },
      log,
    ),
  ),
  on(M.CallDeny, ({ daemon, conn, params, session, log }) =>
    decideCall(
      daemon,
      { userId: session().userId, threadId: params.thread_id, toolCallId: params.tool_call_id },
      { argsSha256: params.args_sha256, decision: 'deny', reason: params.reason, surface: conn.transport },
      log,
    ),
  ),
  // The user's calls awaiting approval, whichever connection or daemon asked them (contract section 17).
  on(M.CallList, ({ daemon, params, session }) => listCalls(daemon, session().userId, params)),
  on(M.SkillsList, ({ session }) => listSkills(session())),
  on(M.SkillsRead, ({ params, session }) => readSkill(session(), params.name, params.path)),
  on(M.Shutdown, ({ state }) => {
    state.shutdownRequested = true;
    return null;
  }),
] as const;

/** A request of the protocol without a handler above fails to compile here (its name is the error). */
type Unhandled = Exclude<M.RequestMethod, (typeof HANDLERS)[number][0]>;
const _everyRequestHandled: [Unhandled] extends [never] ? true : Unhandled = true;

/** The dispatch table: wire name → params schema and handler, every request of the protocol once. */
export const METHODS = Object.fromEntries(HANDLERS) as Readonly<Record<M.RequestMethod, MethodSpec>>;

/**
 * Handles one request. Params must be an object (by-name); positional
 * params are rejected as invalid. Returns the result or throws a
 * ResponseError, which the transport sends as the JSON-RPC error.
 */
export async function dispatch(...args: Parameters<typeof dispatchRequest>): Promise<unknown> {
  const daemon = args[0];
  try {
    return await dispatchRequest(...args);
  } catch (err) {
    // An error repeats what the client named (a method, a key): a token in it never goes back out.
    if (!(err instanceof ResponseError)) throw err;
    const wire = { message: err.message, data: err.data as unknown };
    const clean = scrubError(wire, daemon.secrets);
    throw clean === wire ? err : new ResponseError(err.code, clean.message, clean.data);
  }
}

/** The params that carry a secret on purpose (verified, never stored): not screened, as the guards skip them. */
const NOT_SCREENED: Readonly<Record<string, readonly string[]>> = {
  initialize: ['service_key'],
  'session/open': ['auth'],
};

async function dispatchRequest(
  daemon: Services,
  conn: Connection,
  state: ConnectionState,
  name: string,
  rawParams: unknown,
  token: CancellationToken,
  log: Logger,
): Promise<unknown> {
  // Contract: any request other than `initialize` before it is -32002, known method or not.
  if (!state.initialized && name !== 'initialize') throw new ResponseError(RpcErrorCode.NotInitialized, 'initialize first');
  const spec = Object.hasOwn(METHODS, name) ? METHODS[name as M.RequestMethod] : undefined;
  if (!spec) throw new ResponseError(RpcErrorCode.MethodNotFound, `unknown method ${echoName(name, daemon.secrets)}`);
  if (state.shutdownRequested) throw new ResponseError(RpcErrorCode.InvalidRequest, 'shutdown was requested');
  const parsed = spec.params.safeParse(rawParams ?? (name === 'shutdown' ? {} : undefined));
  if (!parsed.success) {
    throw invalidParams(`invalid params for ${name}`, {
      issues: parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
    });
  }
  // One walk of the params finds the usual request clean; only one it flags goes through the exact checks,
  // which say where and why (a tool call's `args` are then left to its admission, as they always are).
  const screened = screenClean(parsed.data, daemon.secrets ?? [], Object.hasOwn(NOT_SCREENED, name) ? NOT_SCREENED[name] : undefined);
  if (!screened) {
    refuseMalformedStrings(name, parsed.data);
    refuseSecretsInParams(name, parsed.data, daemon.secrets);
  }
  const params = parsed.data as { session_id?: string };
  // Unknown here, or past its token's exp: -32001 either way, the message says which.
  const session = () => daemon.sessions.require(params.session_id, conn.id);
  try {
    return await spec.handler({ daemon, conn, state, params, token, session, log, screened });
  } catch (err) {
    const wire = asWireError(err);
    if (wire) throw wire;
    log.log('error', 'handler failed', { err });
    throw new ResponseError(RpcErrorCode.InternalError, 'internal error');
  }
}
