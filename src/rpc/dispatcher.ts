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
import type { Connection } from './connection.js';
import type { Session } from '../sessions/sessions.js';
import { openSession, type SessionOpenDeps } from '../sessions/session-open.js';
import { cancelCall, getCall, type CallServiceDeps } from '../calls/call-service.js';
import { decideCall, type DecideDeps } from '../calls/approvals.js';
import { listCalls } from '../calls/call-list.js';
import type { ToolCalls } from '../calls/tool-calls.js';
import type { Executor } from '../calls/executor.js';
import { appendMessage, getHistory, threadList, type HistoryDeps } from '../threads/history.js';
import type { SubscriptionRegistry } from '../threads/subscriptions.js';
import type { ThreadEventBus } from '../threads/thread-events.js';
import { listSkills, readSkill } from '../sessions/skills.js';
import { initializeResult, type ServerFacts } from '../sessions/initialize.js';
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

/** What `initialize` reads: the facts it reports, and the environment holding the service key. */
export interface InitializeDeps extends ServerFacts {
  env: NodeJS.ProcessEnv;
}

/** What `tool/invoke` reads: the call service (the one way a tool call runs). */
export interface InvokeDeps {
  toolCalls: Pick<ToolCalls, 'invoke'>;
}

/** What `thread/subscribe` and `thread/unsubscribe` read: the connections' subscriptions and the thread-event bus. */
export interface SubscribeDeps {
  subscriptions: SubscriptionRegistry;
  threadEvents: ThreadEventBus;
}

/**
 * What the dispatcher takes: what each handler reads (its service's own deps,
 * or the interface above it), and what the connection rules read besides —
 * the session registry (`SessionOpenDeps`) and the configured secrets that
 * the params and the errors are screened for (`DecideDeps`).
 */
export interface DispatchDeps extends InitializeDeps, SessionOpenDeps, InvokeDeps, SubscribeDeps, HistoryDeps, CallServiceDeps, DecideDeps {
  /** `initialize` reports its kind (`ServerFacts`); an approved call runs on it (`DecideDeps`). */
  executor: Executor;
}

interface HandlerContext<P, D> {
  services: D;
  conn: Connection;
  state: ConnectionState;
  params: P;
  token: CancellationToken;
  log: Logger;
  session: () => Session;
  /** The params' one walk found no token, secret, credential field or malformed string in them, `args` included. */
  screened: boolean;
}

type Handler<S extends z.ZodType> = (ctx: HandlerContext<z.infer<S>, DispatchDeps>) => unknown;

/** A handler's context reading only `D` of the services (a handler given as such still takes `DispatchDeps`). */
type Narrow<Spec extends RequestSpec, D> = HandlerContext<z.infer<Spec['params']>, D>;

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

/**
 * Every request's handler, by its declaration. A handler that reads the
 * services itself says what it reads (`Narrow`); the others hand them to a
 * service function, whose parameter type says it.
 */
const HANDLERS = [
  on(M.Initialize, ({ services, conn, state, params }: Narrow<typeof M.Initialize, InitializeDeps>) => {
    if (state.initialized) throw new ResponseError(RpcErrorCode.InvalidRequest, 'already initialized');
    const serviceKey = services.env.TOOLGATE_SERVICE_KEY;
    if (params.service_key !== undefined) {
      if (!serviceKey || !constantTimeEqual(params.service_key, serviceKey)) throw unauthorized('invalid service key');
      conn.trusted = true;
    }
    state.initialized = true;
    return initializeResult(services);
  }),
  on(M.SessionOpen, ({ services, conn, params }) => openSession(services, conn, params)),
  on(M.ToolInvoke, async ({ services, conn, params, token, session, log, screened }: Narrow<typeof M.ToolInvoke, InvokeDeps>) => {
    const call = { threadId: params.thread_id, toolCallId: params.tool_call_id, args: params.args, traceparent: params._meta?.traceparent, screened };
    const signal = abortSignalOf(token);
    try {
      return (await services.toolCalls.invoke(session(), call, { signal: signal.signal, to: conn, log })).response;
    } finally {
      signal.dispose();
    }
  }),
  // Threads are per user: subscribing watches the session user's thread of that id (which may not exist
  // yet) and creates nothing; another user's thread of the same id is never reached.
  on(M.ThreadSubscribe, async ({ services, conn, params, session }: Narrow<typeof M.ThreadSubscribe, SubscribeDeps>) => {
    const s = session();
    services.subscriptions.subscribe(s.userId, params.thread_id, conn, s.id);
    // Answered once the thread's position is read (on PostgreSQL: other daemons' calls reach us too).
    await services.threadEvents.ready(s.userId, params.thread_id);
    return { thread_id: params.thread_id, subscribed: true };
  }),
  on(M.ThreadUnsubscribe, ({ services, conn, params, session }: Narrow<typeof M.ThreadUnsubscribe, Pick<SubscribeDeps, 'subscriptions'>>) => {
    const s = session();
    services.subscriptions.unsubscribe(s.userId, params.thread_id, conn.id, s.id);
    return { thread_id: params.thread_id, subscribed: false };
  }),
  on(M.MessageAppend, ({ services, params, session }) => appendMessage(services, session(), params)),
  on(M.HistoryGet, ({ services, params, session }) => getHistory(services, session(), params)),
  on(M.ThreadList, ({ services, params, session }) => threadList(services, session(), params)),
  // A call of the session's user, from any of its connections (contract section 16).
  on(M.CallGet, ({ services, params, session }) => getCall(services, { userId: session().userId, threadId: params.thread_id, toolCallId: params.tool_call_id })),
  on(M.CallCancel, ({ services, conn, params, session }) =>
    cancelCall(services, { userId: session().userId, threadId: params.thread_id, toolCallId: params.tool_call_id }, conn.transport),
  ),
  // A person's decision on a call awaiting approval, bound to its args digest (contract section 17).
  on(M.CallApprove, ({ services, conn, params, session, log }) =>
    decideCall(
      services,
      { userId: session().userId, threadId: params.thread_id, toolCallId: params.tool_call_id },
      { argsSha256: params.args_sha256, decision: 'approve', surface: conn.transport },
      log,
    ),
  ),
  on(M.CallDeny, ({ services, conn, params, session, log }) =>
    decideCall(
      services,
      { userId: session().userId, threadId: params.thread_id, toolCallId: params.tool_call_id },
      { argsSha256: params.args_sha256, decision: 'deny', reason: params.reason, surface: conn.transport },
      log,
    ),
  ),
  // The user's calls awaiting approval, whichever connection or daemon asked them (contract section 17).
  on(M.CallList, ({ services, params, session }) => listCalls(services, session().userId, params)),
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
  const services = args[0];
  try {
    return await dispatchRequest(...args);
  } catch (err) {
    // An error repeats what the client named (a method, a key): a token in it never goes back out.
    if (!(err instanceof ResponseError)) throw err;
    const wire = { message: err.message, data: err.data as unknown };
    const clean = scrubError(wire, services.secrets);
    throw clean === wire ? err : new ResponseError(err.code, clean.message, clean.data);
  }
}

/** The params that carry a secret on purpose (verified, never stored): not screened, as the guards skip them. */
const NOT_SCREENED: Readonly<Record<string, readonly string[]>> = {
  initialize: ['service_key'],
  'session/open': ['auth'],
};

async function dispatchRequest(
  services: DispatchDeps,
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
  if (!spec) throw new ResponseError(RpcErrorCode.MethodNotFound, `unknown method ${echoName(name, services.secrets)}`);
  if (state.shutdownRequested) throw new ResponseError(RpcErrorCode.InvalidRequest, 'shutdown was requested');
  const parsed = spec.params.safeParse(rawParams ?? (name === 'shutdown' ? {} : undefined));
  if (!parsed.success) {
    throw invalidParams(`invalid params for ${name}`, {
      issues: parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
    });
  }
  // One walk of the params finds the usual request clean; only one it flags goes through the exact checks,
  // which say where and why (a tool call's `args` are then left to its admission, as they always are).
  const screened = screenClean(parsed.data, services.secrets ?? [], Object.hasOwn(NOT_SCREENED, name) ? NOT_SCREENED[name] : undefined);
  if (!screened) {
    refuseMalformedStrings(name, parsed.data);
    refuseSecretsInParams(name, parsed.data, services.secrets);
  }
  const params = parsed.data as { session_id?: string };
  // Unknown here, or past its token's exp: -32001 either way, the message says which.
  const session = () => services.sessions.require(params.session_id, conn.id);
  try {
    return await spec.handler({ services, conn, state, params, token, session, log, screened });
  } catch (err) {
    const wire = asWireError(err);
    if (wire) throw wire;
    log.log('error', 'handler failed', { err });
    throw new ResponseError(RpcErrorCode.InternalError, 'internal error');
  }
}
