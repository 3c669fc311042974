/**
 * `tools/call` of `project_cli` over MCP: a thin adapter onto the call service (`ToolCalls.invoke`),
 * the very path of `tool/invoke` (whitelist, credential, CLI boundary,
 * storage, subscribers, AG-UI). It only translates:
 *
 * - arguments → `args` (a malformed object becomes the structured
 *   INVALID_ACTION_INPUT projection, a tool error the model can correct);
 * - `_meta["toolgate/thread_id"]` / the MCP session → the thread;
 * - the call's own `tool/result` partials → `notifications/progress`;
 * - the AbortSignal of `notifications/cancelled` → the cancellation token;
 * - the response → `content` (the projection, byte for byte),
 *   `structuredContent` (the object that text is the JSON of), `isError`;
 * - the final `tool/result`'s compiled `ui_schema` → `_meta["toolgate/ui_schema"]`, what the
 *   MCP App (mcp-apps.ts) draws — the very card `tool/result` carries; a host without the
 *   extension ignores `_meta`, and the text and `structuredContent` are unchanged by it.
 */
import { randomUUID } from 'node:crypto';
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type InputRequiredResult, type ServerContext } from '@modelcontextprotocol/server';
import type { ToolError, ToolResultNotification } from '../codec/tool-output.js';
import type { ToolResponse } from '../protocol/tool.js';
import { echoName, redact, scrubCredentials } from '../codec/redact.js';
import { findSecretIn } from '../codec/secret-scan.js';
import { malformedReason } from '../codec/well-formed.js';
import { screenClean } from '../codec/screen.js';
import type { Services } from '../rpc/services.js';
import type { Connection } from '../rpc/connection.js';
import { TOOL_DESCRIPTOR } from '../sessions/initialize.js';
import type { Logger } from '../runtime/logger.js';
import type { Session } from '../sessions/sessions.js';
import { metaTraceparent } from '../telemetry/spans.js';
import { RpcErrorCode, asWireError } from '../rpc/errors.js';
import { ToolArgs } from '../protocol/methods.js';
import { Id } from '../protocol/json.js';
import { UI_SCHEMA_META_KEY } from '../protocol/mcp-apps.js';
import type { ToolCallArgs } from '../protocol/tool.js';
import { argsSha256 } from '../codec/canonical-json.js';
import { HostAsked } from '../runtime/peer.js';
import { endPending } from '../calls/pending-calls.js';
import { decideCall, type DecideDeps } from '../calls/approvals.js';
import { askHostResult, hostDecisionOf, mintApprovalState, type ApprovalState } from './mcp-approval.js';

export const THREAD_META_KEY = 'toolgate/thread_id';
export const TOOL_CALL_META_KEY = 'toolgate/tool_call_id';
/** Set on the `tools/call` a task runs (mcp-tasks.ts): its approval is reported by the task, never asked of the host. */
export const TASK_RUN_META_KEY = 'toolgate/task_run';

/** Why a principal's token no longer holds: refused, or not checkable now (its issuer's keys out of reach: a retry may pass). */
export interface AuthProblem {
  message: string;
  unavailable: boolean;
}

/** Who an MCP server instance acts for, and how its calls are limited. */
export interface McpPrincipal {
  session: Session;
  /** Thread of calls that name none and have no MCP session: stdio's own, or the user's `mcp` (sessionless HTTP). */
  fallbackThread: string;
  /** Re-checks the credential before each call (stdio: the token's `exp`); a message when it no longer holds. */
  checkAuth?: () => Promise<AuthProblem | null>;
  /** Calls in flight for this principal (an MCP session, or a user's sessionless requests). */
  inFlight: { count: number; max: number };
}

export interface McpCallDeps {
  /** The call service, the decisions a host's retry carries, the key that signs its requestState, the log. */
  services: Pick<Services, 'toolCalls' | 'signingKey' | 'log' | 'secrets'> & DecideDeps;
  track: <T>(work: Promise<T>) => Promise<T>;
  accepting: () => boolean;
}

/**
 * The CallToolResult of a call's ToolResponse: `content` byte for byte,
 * `structuredContent` the object its text is the JSON of (given, or parsed
 * back from a stored call's text), `isError` on failure.
 */
export function toolResultOf(response: ToolResponse, projection: unknown = JSON.parse(response.content[0]?.text ?? 'null')): CallToolResult {
  return { content: response.content, structuredContent: projection as Record<string, unknown>, isError: response.status === 'failure' };
}

/** The projection of a failure the daemon decides before any action runs. */
function toolFailureResult(error: ToolError): CallToolResult {
  const structured = { status: 'failure' as const, error };
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured, isError: true };
}

/** `module`/`method` of the error as the model wrote them (null when it did not; `[redacted]` when one carries a token). */
function namesOf(raw: unknown, secrets: readonly string[]): { module: string | null; method: string | null } {
  const r = (raw ?? {}) as { module?: unknown; method?: unknown };
  const echo = (v: unknown) => (typeof v === 'string' ? echoName(v, secrets) : null);
  return { module: echo(r.module), method: echo(r.method) };
}

/**
 * A problem of the host's side of the call (its `_meta`, the thread, load):
 * not the model's to correct, so a protocol error — which the SDK's tool
 * dispatcher hands back as a plain-text tool error.
 */
function hostError(code: number, message: string): ProtocolError {
  return new ProtocolError(code, message);
}

/**
 * The call a `tools/call` names: `(thread, tool_call_id)` from the host's
 * `_meta`, else the MCP session's thread (or the principal's) and a fresh id.
 * A malformed id, or one carrying a token, is the host's error (nothing stored).
 */
export function callIdentity(
  principal: Pick<McpPrincipal, 'fallbackThread'>,
  meta: Record<string, unknown>,
  sessionId: string | undefined,
  secrets: readonly string[] | undefined,
): { threadId: string; toolCallId: string } {
  const namedThread = meta[THREAD_META_KEY];
  if (namedThread !== undefined && !Id.safeParse(namedThread).success) {
    throw hostError(ProtocolErrorCode.InvalidParams, `_meta["${THREAD_META_KEY}"] must be a string of 1 to 200 characters`);
  }
  const namedCall = meta[TOOL_CALL_META_KEY];
  if (namedCall !== undefined && !Id.safeParse(namedCall).success) {
    throw hostError(ProtocolErrorCode.InvalidParams, `_meta["${TOOL_CALL_META_KEY}"] must be a string of 1 to 200 characters`);
  }
  // Ids are stored (threads, messages, call records): a token pasted into one is refused, as on tool/invoke.
  for (const [key, value] of [[THREAD_META_KEY, namedThread], [TOOL_CALL_META_KEY, namedCall]] as const) {
    if (value !== undefined && findSecretIn(value, secrets) !== null) {
      throw hostError(ProtocolErrorCode.InvalidParams, `_meta["${key}"] carries a bearer token or credential; such text is refused and nothing was stored`);
    }
    // U+0000 or a lone surrogate: no engine stores it as it is (the args are admitted by the call service).
    const malformed = typeof value === 'string' ? malformedReason(value) : null;
    if (malformed) throw hostError(ProtocolErrorCode.InvalidParams, `_meta["${key}"] ${malformed}, which no id may hold; nothing was stored`);
  }
  return {
    threadId: (namedThread as string | undefined) ?? (sessionId ? `mcp-${sessionId}` : principal.fallbackThread),
    toolCallId: (namedCall as string | undefined) ?? `mcp-${randomUUID()}`,
  };
}

/** Whether this `tools/call` may end with `input_required` to have its host ask the user (mcp-approval.ts). */
export interface HostAsking {
  /** The client declared form elicitation, and the call is not a task's (a task reports `input_required` itself). */
  canElicit: boolean;
}

export async function callProjectCli(
  deps: McpCallDeps,
  principal: McpPrincipal,
  raw: unknown,
  ctx: ServerContext,
  host: HostAsking = { canElicit: false },
): Promise<CallToolResult | InputRequiredResult> {
  const { services } = deps;
  // Only a refusal below echoes the names (each looked at for a token first): a call that runs never needs them.
  const names = () => namesOf(raw, services.secrets ?? []);
  const log = services.log.child({ transport: 'mcp', mcp_session: ctx.sessionId ?? null, request_id: `mcp_${String(ctx.mcpReq.id)}` });

  if (principal.checkAuth) {
    const problem = await principal.checkAuth();
    if (problem) return toolFailureResult({ code: 'UNAUTHENTICATED', message: problem.message, ...names() });
  }
  const parsed = ToolArgs.safeParse(raw ?? {});
  if (!parsed.success) {
    return toolFailureResult({
      code: 'INVALID_ACTION_INPUT',
      message: 'project_cli takes {module, method, input}: module and method are strings, input is an object',
      ...names(),
      // zod names an unknown key in its message: a token there (split by a newline or tab, even) is masked here,
      // before the result's text is serialized — the outgoing scrub reads that text with the newline escaped.
      issues: scrubCredentials(
        parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
        services.secrets ?? [],
      ),
      input_schema: TOOL_DESCRIPTOR.input_schema,
    });
  }
  const meta = (ctx.mcpReq._meta ?? {}) as Record<string, unknown>;
  let { threadId, toolCallId } = callIdentity(principal, meta, ctx.sessionId, services.secrets);

  if (!deps.accepting()) throw hostError(RpcErrorCode.ShuttingDown, 'the daemon is shutting down');
  if (principal.inFlight.count >= principal.inFlight.max) {
    throw hostError(RpcErrorCode.Overloaded, `too many calls in flight (at most ${principal.inFlight.max})`);
  }

  // This call's own notifications: partials become progress; the final one is the response itself.
  const progressToken = meta.progressToken as string | number | undefined;
  const items = Array.isArray(parsed.data.input.items) ? parsed.data.input.items.length : undefined;
  const sent: Array<Promise<void>> = [];
  let progress = 0;
  let uiSchema: unknown;
  // A place of the principal's in-flight calls, held while the call is admitted and runs. A call awaiting
  // approval is not running (contract section 16): from its `tool/approval` on its place is free — a task, or a
  // client waiting for a person, never keeps the principal's other calls out for up to `ttl_s`.
  let holding = false;
  const leave = () => {
    if (!holding) return;
    holding = false;
    principal.inFlight.count -= 1;
  };
  const conn: Connection = {
    id: `mcp_${randomUUID()}`,
    transport: 'mcp',
    trusted: false,
    ...(host.canElicit ? { askHost: () => true } : {}),
    notify(method, params) {
      if (method === 'tool/approval') return leave();
      const n = params as ToolResultNotification;
      if (method === 'tool/result' && n.final) uiSchema = n.ui_schema;
      if (method !== 'tool/result' || n.final || progressToken === undefined) return;
      progress += 1;
      const item = n.result?.data as { index?: number; ok?: boolean } | undefined;
      const message = item && typeof item.index === 'number' ? `item ${item.index}: ${item.ok ? 'ok' : 'failed'}` : `item ${progress}`;
      sent.push(
        ctx.mcpReq
          .notify({ method: 'notifications/progress', params: { progressToken, progress, ...(items ? { total: items } : {}), message } })
          .catch(() => {}),
      );
    },
  };

  principal.inFlight.count += 1;
  holding = true;
  const started = performance.now();
  try {
    const traceparent = metaTraceparent(meta) ?? ctx.http?.req?.headers.get('traceparent') ?? undefined;
    // A retry answering an approval request: the call its signed state names, decided as the person answered
    // (counted in flight and drained at shutdown like the call it may run).
    const state = ctx.mcpReq.requestState<ApprovalState>();
    if (state !== undefined) ({ threadId, toolCallId } = await deps.track(applyHostDecision(services, principal, parsed.data, state, ctx, log)));
    // One walk of the args; admission walks them again only when it finds something to refuse.
    const call = { threadId, toolCallId, args: parsed.data, traceparent, screened: screenClean(parsed.data, services.secrets ?? []) };
    let answer;
    try {
      answer = await deps.track(services.toolCalls.invoke(principal.session, call, { signal: ctx.mcpReq.signal, to: conn, log }));
    } catch (err) {
      if (!(err instanceof HostAsked)) throw err;
      // The host asks its user; its retry (same arguments, the answer, this state) decides and gets the outcome.
      log.log('info', 'tool call: the MCP host asks its user', { thread_id: threadId, tool_call_id: toolCallId });
      return askHostResult(err.notification, await mintApprovalState(services.signingKey, principal.session.userId, err.notification));
    }
    const { response, projection } = answer;
    await Promise.all(sent);
    // Let the progress leave in its own write: some clients drop progress that arrives in one read with its response.
    if (sent.length > 0) await new Promise((resolve) => setImmediate(resolve));
    await logCall(ctx, log, {
      thread_id: threadId,
      tool_call_id: toolCallId,
      action: `${parsed.data.module}.${parsed.data.method}`,
      status: response.status,
      ms: Math.round(performance.now() - started),
    });
    // The text is the JSON of this very object: nothing is parsed back.
    const result = toolResultOf(response, projection);
    if (uiSchema !== undefined) result._meta = { [UI_SCHEMA_META_KEY]: uiSchema };
    return result;
  } catch (err) {
    // THREAD_NOT_FOUND and the like: the same code and message as on tool/invoke (one table, errors.ts).
    const wire = asWireError(err);
    if (wire) throw new ProtocolError(wire.code, wire.message, wire.data);
    throw err;
  } finally {
    leave();
  }
}

/**
 * The retry of a call its host asked about (`input_required`): the state
 * must name a call of this user with these very arguments; the person's
 * answer, if the retry carries one, approves, denies or cancels it here
 * (a call decided meanwhile elsewhere stays decided). The retry then runs
 * on as a re-invocation of that call: it answers with the outcome, or asks
 * again while nobody has decided.
 */
async function applyHostDecision(
  services: DecideDeps,
  principal: McpPrincipal,
  args: ToolCallArgs,
  state: ApprovalState,
  ctx: ServerContext,
  log: Logger,
): Promise<{ threadId: string; toolCallId: string }> {
  if (typeof state !== 'object' || state === null || state.u !== principal.session.userId) {
    throw hostError(ProtocolErrorCode.InvalidParams, 'the requestState names no call of this user');
  }
  if (argsSha256(args) !== state.a) {
    throw hostError(ProtocolErrorCode.InvalidParams, 'the arguments of this retry are not those of the call its requestState names; nothing was decided');
  }
  const key = { userId: state.u, threadId: state.t, toolCallId: state.c };
  const decision = hostDecisionOf(ctx.mcpReq.inputResponses);
  try {
    // Cancel ends the call only while it awaits approval: a call approved meanwhile elsewhere runs on.
    if (decision === 'cancel') await endPending(services, key, { decision: 'cancel', surface: 'mcp' });
    else if (decision) await decideCall(services, key, { argsSha256: state.a, decision, surface: 'mcp' }, log);
  } catch (err) {
    const wire = asWireError(err);
    if (wire) throw new ProtocolError(wire.code, wire.message, wire.data);
    throw err;
  }
  return { threadId: state.t, toolCallId: state.c };
}

/**
 * `notifications/message` about the session's own call, when the client
 * enabled logging: only this request's outcome, redacted like every log.
 */
async function logCall(ctx: ServerContext, log: Logger, fields: Record<string, unknown>): Promise<void> {
  try {
    await ctx.mcpReq.log('info', redact(fields), 'toolgate');
  } catch (err) {
    log.log('debug', 'mcp log message not sent', { err: (err as Error).message });
  }
}
