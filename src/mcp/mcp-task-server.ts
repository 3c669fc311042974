/**
 * The SDK's server with task-augmented `tools/call` (contract section 18).
 *
 * `@modelcontextprotocol/server` 2.x carries the task wire vocabulary but no
 * task runtime, and the `tools/call` handler it wraps admits a CallToolResult
 * only (typescript-sdk #2189). `_wrapHandler` is the SDK's documented seam
 * for role-specific request handling: TaskServer uses it to answer a
 * `tools/call` that asks for a task with a CreateTaskResult, while the very
 * handler the SDK wrapped — validation, projection, everything an ordinary
 * call goes through — runs the call on behind the task. Every other
 * request, and every `tools/call` that asks for no task, is the SDK's own.
 * The `tasks/*` methods themselves are registered through the SDK's
 * custom-method form (mcp-tasks.ts).
 */
import {
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  isInputRequiredResult,
  specTypeSchemas,
  type Implementation,
  type JSONRPCRequest,
  type Result,
  type ServerContext,
  type ServerOptions,
  type SpecTypeName,
} from '@modelcontextprotocol/server';
import type { AskedCall, AskedCalls } from './mcp-host-ask.js';
import { THREAD_META_KEY, TOOL_CALL_META_KEY } from './mcp-tool.js';
import { echoName } from '../codec/redact.js';

export type RequestHandler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/** The first revision whose tasks are the `io.modelcontextprotocol/tasks` extension. */
const MODERN_REVISION = '2026-07-28';

/** What decides and starts task-augmented calls (mcp-tasks.ts). */
export interface TaskCalls {
  /**
   * Whether this `tools/call` asks for a task (2025-11-25: `params.task`; 2026-07-28: the client declared the
   * extension). Throws -32602 for a `params.task` that is malformed (2025-11-25).
   */
  requested(request: JSONRPCRequest, ctx: ServerContext, modern: boolean): boolean;
  /**
   * Runs the call through `run` behind a task: resolves with the
   * CreateTaskResult once any daemon can report the task — or with the
   * call's own answer when it ended without one to report.
   */
  start(request: JSONRPCRequest, ctx: ServerContext, modern: boolean, run: RequestHandler): Promise<Result>;
}

export class TaskServer extends Server {
  private taskCalls: TaskCalls | undefined;
  private askedCalls: AskedCalls | undefined;
  /** Each round of a 2025-11-25 `tools/call` that may ask its host, by the signal its rounds share: told each round's start and result. */
  private readonly rounds = new WeakMap<AbortSignal, (result: Result | undefined) => void>();

  /** From now on task-augmented `tools/call` requests go to `calls` (call before connecting). */
  serveTasks(calls: TaskCalls): void {
    this.taskCalls = calls;
  }

  /** From now on a 2025-11-25 `tools/call` whose host's user is asked follows its call through `calls` (mcp-host-ask.ts). */
  followAsked(calls: AskedCalls): void {
    this.askedCalls = calls;
  }

  /** Whether this instance serves 2026-07-28 or later (tasks as an extension), rather than a 2025 revision. */
  servesModernEra(): boolean {
    const version = this._negotiatedProtocolVersion;
    return version !== undefined && version >= MODERN_REVISION;
  }

  protected override _wrapHandler(method: string, handler: RequestHandler): RequestHandler {
    if (method === 'logging/setLevel') return super._wrapHandler(method, (request, ctx) => (checkLogLevel(request), handler(request, ctx)));
    const type = REQUEST_TYPES[method];
    if (type) return super._wrapHandler(method, (request, ctx) => (checkParams(method, type, request), handler(request, ctx)));
    if (method !== 'tools/call') return super._wrapHandler(method, handler);
    // The SDK's 2025-11-25 shim calls the handler once per round with the request's signal: each round is told.
    const told: RequestHandler = async (request, ctx) => {
      const round = this.rounds.get(ctx.mcpReq.signal);
      round?.(undefined);
      const result = await handler(request, ctx);
      round?.(result);
      return result;
    };
    const wrapped = super._wrapHandler(method, told);
    // Async: a `tools/call` whose task param `requested` refuses is answered with that error.
    return async (request, ctx) => {
      const calls = this.taskCalls;
      const modern = this.servesModernEra();
      if (calls?.requested(request, ctx, modern)) return calls.start(request, ctx, modern, wrapped);
      // 2026-07-28 answers input_required to the host itself: nothing of it waits here.
      return modern || !this.askedCalls ? wrapped(request, ctx) : this.followingAsked(request, ctx, wrapped, this.askedCalls);
    };
  }

  /**
   * A 2025-11-25 `tools/call` that may ask its host's user (the shim's
   * `elicitation/create`, awaited within this request): while a question is
   * open, its call is followed. Decided elsewhere or expired, the question
   * is withdrawn (the shim's leg aborted, which cancels it in the host) and
   * the call answered again as a re-invocation — its outcome. The host
   * cancelling its request while asked cancels the call.
   */
  private async followingAsked(request: JSONRPCRequest, ctx: ServerContext, wrapped: RequestHandler, calls: AskedCalls): Promise<Result> {
    const outer = ctx.mcpReq.signal;
    const own = new AbortController();
    const relay = () => own.abort(outer.reason);
    outer.addEventListener('abort', relay, { once: true });
    if (outer.aborted) relay();
    let asked: AskedCall | undefined;
    let watch: AbortController | undefined;
    let decided = false;
    this.rounds.set(own.signal, (result) => {
      watch?.abort();
      watch = undefined;
      asked = result && isInputRequiredResult(result) ? calls.callOf(result) : undefined;
      if (!asked) return;
      const w = (watch = new AbortController());
      void calls.untilDecided(asked, w.signal).then(
        () => {
          if (w.signal.aborted) return;
          decided = true;
          own.abort(new Error('the call was decided elsewhere'));
        },
        () => {},
      );
    });
    try {
      return await wrapped(request, { ...ctx, mcpReq: { ...ctx.mcpReq, signal: own.signal } });
    } catch (err) {
      if (asked && outer.aborted) await calls.cancel(asked).catch(() => {});
      else if (asked && decided) return await wrapped(...reinvocation(request, ctx, asked));
      throw err;
    } finally {
      watch?.abort();
      outer.removeEventListener('abort', relay);
      this.rounds.delete(own.signal);
    }
  }
}

/** The levels `logging/setLevel` may name (MCP's LoggingLevel, RFC 5424's severities). */
const LOG_LEVELS: readonly string[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/**
 * A `logging/setLevel` naming no level of MCP's is the client's mistake:
 * -32602. The SDK's own check throws a plain Error there, which goes out as
 * -32603 (internal error); this runs before it.
 */
function checkLogLevel(request: JSONRPCRequest): void {
  const level = (request.params as { level?: unknown } | undefined)?.level;
  if (typeof level === 'string' && LOG_LEVELS.includes(level)) return;
  const given = level === undefined ? 'no level' : `level ${JSON.stringify(level)?.slice(0, 40) ?? typeof level}`;
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params for logging/setLevel: ${given}; the level is one of ${LOG_LEVELS.join(', ')}`);
}

/**
 * The spec type of each request the SDK validates in its own handler
 * wrapper, where a mismatch is thrown as a plain Error and so goes out as
 * -32603 (`tools/call` it checks as -32602 itself; `logging/setLevel` is
 * checked above).
 */
const REQUEST_TYPES: Readonly<Record<string, SpecTypeName>> = {
  initialize: 'InitializeRequest',
  'tools/list': 'ListToolsRequest',
  'resources/list': 'ListResourcesRequest',
  'resources/templates/list': 'ListResourceTemplatesRequest',
  'resources/read': 'ReadResourceRequest',
  'prompts/list': 'ListPromptsRequest',
  'prompts/get': 'GetPromptRequest',
};

/**
 * Params that do not fit the method's spec schema (a `uri` that is no
 * string, a `prompts/get` without `name`) are the client's mistake: -32602
 * naming the fields, checked before the SDK's own check. Extra fields pass,
 * as they do there.
 */
function checkParams(method: string, type: SpecTypeName, request: JSONRPCRequest): void {
  const problem = paramsProblem(method, type, request.params);
  if (problem) throw new ProtocolError(ProtocolErrorCode.InvalidParams, problem);
}

/**
 * The -32602 message for an `initialize` whose params do not fit the spec's schema; null when they fit. The first
 * `initialize` over Streamable HTTP opens its session, so it is answered before any server sees it (mcp-http.ts).
 */
export function initializeParamsProblem(params: unknown): string | null {
  return paramsProblem('initialize', 'InitializeRequest', params);
}

function paramsProblem(method: string, type: SpecTypeName, params: unknown): string | null {
  const { issues } = specTypeSchemas[type]['~standard'].validate({ method, params });
  if (!issues) return null;
  // The first few, each key cut and checked for a token as every echoed name is (a client's keys are its own
  // text): a request with thousands of bad values gets a short answer, not one as large as itself.
  const problems = issues.slice(0, MAX_PARAM_ISSUES).map((issue) => {
    const path = (issue.path ?? []).map((p) => echoName(String(typeof p === 'object' ? p.key : p))).filter((p, i) => i > 0 || p !== 'params');
    return `${path.length > 0 ? path.join('.') : 'params'}: ${issue.message}`;
  });
  const more = issues.length > MAX_PARAM_ISSUES ? ` (and ${issues.length - MAX_PARAM_ISSUES} more)` : '';
  return `Invalid params for ${method}: ${problems.join('; ')}${more}`;
}

/** Issues named in one -32602 answer. */
const MAX_PARAM_ISSUES = 3;

/** The same `tools/call` naming the call it asked about: answered as a re-invocation, with the call's outcome. */
function reinvocation(request: JSONRPCRequest, ctx: ServerContext, call: AskedCall): [JSONRPCRequest, ServerContext] {
  const params = (request.params ?? {}) as Record<string, unknown>;
  const meta = { ...(ctx.mcpReq._meta ?? {}), [THREAD_META_KEY]: call.threadId, [TOOL_CALL_META_KEY]: call.toolCallId };
  return [
    { ...request, params: { ...params, _meta: meta } },
    { ...ctx, mcpReq: { ...ctx.mcpReq, _meta: meta } },
  ];
}

/**
 * An McpServer standing on a TaskServer. The base class builds its own
 * Server and offers no way to pass another, so it is built here without
 * options (it then installs no handler on that one) and this server
 * replaces it before anything registers: tools, resources and prompts
 * registered on this McpServer land on the TaskServer, capabilities and all.
 */
export class TaskMcpServer extends McpServer {
  declare readonly server: TaskServer;

  constructor(info: Implementation, options: ServerOptions) {
    super(info);
    this.server = new TaskServer(info, options);
  }

  /**
   * The SDK sends these (a tool updated, a prompt added or removed: mcp-server.ts on a config reload) without
   * awaiting them, and a stdio write to a host that went away rejects: unhandled, it would end the daemon.
   * The client learns nothing it would not learn by listing again, so a failed send is only dropped.
   */
  override sendToolListChanged(): void {
    if (this.isConnected()) this.server.sendToolListChanged().catch(() => {});
  }

  override sendPromptListChanged(): void {
    if (this.isConnected()) this.server.sendPromptListChanged().catch(() => {});
  }

  override sendResourceListChanged(): void {
    if (this.isConnected()) this.server.sendResourceListChanged().catch(() => {});
  }
}
