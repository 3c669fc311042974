/**
 * MCP Tasks backed by the stored call (contract section 18): a task is the
 * call of section 16, `(user, thread_id, tool_call_id)`, and nothing else —
 * no task table, no memory of it in this process. So any daemon on the
 * database answers for it, a task outlives its MCP session, and it lives as
 * long as its call stays in history (`ttl: null`).
 *
 * The task id is the call's `(thread_id, tool_call_id)`, base64url-encoded
 * JSON. It names the call within its user only: every lookup is the
 * requesting principal's user's, so another user's task id — or a forged
 * one — finds nothing and gets the same -32602 as an unknown id. The id
 * tells its holder nothing they did not send or receive themselves.
 *
 * Status (one place, `taskStatusOf`): running → `working`; awaiting
 * approval → `input_required`; done → `completed`, or `cancelled` for a
 * CANCELLED outcome, or on 2025-11-25 `failed` for any other tool failure
 * (that revision calls an `isError` result failed; 2026-07-28 calls it
 * completed, `failed` being for JSON-RPC errors only).
 */
import { CLIENT_CAPABILITIES_META_KEY, MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode, RELATED_TASK_META_KEY, type CallToolResult, type JSONRPCRequest, type Result, type ServerContext } from '@modelcontextprotocol/server';
import { awaitCallDone, callVisible, cancelCall, getCall, listCalls, type CallServiceDeps } from '../calls/call-service.js';
import type { CallKey } from '../calls/running-calls.js';
import type { Logger } from '../runtime/logger.js';
import { DaemonError } from '../runtime/errors.js';
import type { CallGetResult } from '../protocol/methods.js';
import type { ToolResponse } from '../protocol/tool.js';
import { Id } from '../protocol/json.js';
import { UI_SCHEMA_META_KEY } from '../protocol/mcp-apps.js';
import { outputOf, uiSchemaOf } from '../threads/message-views.js';
import type { UiCache } from '../threads/ui-cache.js';
import { malformedReason } from '../codec/well-formed.js';
import { argsSha256 } from '../codec/canonical-json.js';
import { ToolArgs } from '../protocol/methods.js';
import { asWireError } from '../rpc/errors.js';
import { RpcErrorCode } from '../protocol/errors.js';
import { TASK_RUN_META_KEY, THREAD_META_KEY, TOOL_CALL_META_KEY, callIdentity, toolResultOf, type McpPrincipal } from './mcp-tool.js';
import type { RequestHandler, TaskCalls, TaskServer } from './mcp-task-server.js';
import { APPROVAL_INPUT_KEY, approvalInputRequest, hostDecisionOf, type ApprovalQuestion } from './mcp-approval.js';
import { decideCall, type DecideDeps } from '../calls/approvals.js';
import { endPending } from '../calls/pending-calls.js';
import {
  ClientCapabilitiesEnvelope,
  MODEL_IMMEDIATE_RESPONSE_META_KEY,
  TASKS_EXTENSION_ID,
  TaskAck,
  TaskIdParams,
  TaskMetadata2025,
  Task2025,
  Task2026,
  ListTasksParams,
  ListTasksResult2025,
  UpdateTaskParams,
  type TaskStatus,
} from './mcp-task-wire.js';

/** How often a client is asked to poll `tasks/get`. */
const TASK_POLL_INTERVAL_MS = 1000;

/** The server's `tasks` capability on 2025-11-25 (stripped by the SDK on 2026-07-28, where the extension stands instead). */
const TASKS_CAPABILITY_2025 = { list: {}, cancel: {}, requests: { tools: { call: {} } } } as const;

/** Tasks per `tasks/list` page. */
const TASK_LIST_PAGE = 50;

/** The opaque cursor of the next `tasks/list` page: the last listed stored call's `[created_at, id]`. */
function cursorOf(next: readonly [string, string]): string {
  return Buffer.from(JSON.stringify(next), 'utf8').toString('base64url');
}

function afterOf(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    // A string no engine stores as it is (U+0000, a lone surrogate) is in no cursor of ours.
    if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === 'string' && malformedReason(v) === null)) {
      return [value[0] as string, value[1] as string];
    }
  } catch {
    /* below */
  }
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid tasks/list cursor');
}

type CallGet = CallGetResult;

/** The task id of a call: its `(thread_id, tool_call_id)`, base64url JSON. */
export function taskIdOf(threadId: string, toolCallId: string): string {
  return Buffer.from(JSON.stringify([threadId, toolCallId]), 'utf8').toString('base64url');
}

/** The call a task id names, or undefined for a string that is no task id of ours. */
export function callOfTaskId(taskId: string): { threadId: string; toolCallId: string } | undefined {
  try {
    const value = JSON.parse(Buffer.from(taskId, 'base64url').toString('utf8')) as unknown;
    // An id holding U+0000 or a lone surrogate names no call (none is ever stored, contract section 21): it is
    // not looked up, since PostgreSQL refuses the first and both engines would read the second as U+FFFD.
    const wellFormedId = (v: unknown) => Id.safeParse(v).success && malformedReason(v as string) === null;
    if (Array.isArray(value) && value.length === 2 && wellFormedId(value[0]) && wellFormedId(value[1])) {
      return { threadId: value[0] as string, toolCallId: value[1] as string };
    }
  } catch {
    /* not ours */
  }
  return undefined;
}

/** The error code of a stored failure (the projection's `error.code`), if any. */
function failureOf(outcome: ToolResponse): { code?: string; message?: string } | undefined {
  if (outcome.status !== 'failure') return undefined;
  const projection = JSON.parse(outcome.content[0]?.text ?? '{}') as { error?: { code?: string; message?: string } };
  return projection.error ?? {};
}

/** The one mapping from a call's state to a task's status (see the top of this file). */
export function taskStatusOf(call: CallGet, modern: boolean): { status: TaskStatus; statusMessage?: string } {
  switch (call.state) {
    case 'awaiting_approval':
      return { status: 'input_required', statusMessage: 'The call waits for its user to approve it.' };
    case 'running':
      return { status: 'working', statusMessage: 'The call is running.' };
    case 'done': {
      const failure = call.outcome ? failureOf(call.outcome) : undefined;
      if (!failure) return { status: 'completed' };
      if (failure.code === 'CANCELLED') return { status: 'cancelled', statusMessage: failure.message ?? 'The call was cancelled.' };
      return { status: modern ? 'completed' : 'failed', statusMessage: failure.message ?? 'The call failed.' };
    }
  }
}

function task2025(call: CallGet): Task2025 {
  return Task2025.parse({
    taskId: taskIdOf(call.thread_id, call.tool_call_id),
    ...taskStatusOf(call, false),
    createdAt: call.created_at,
    lastUpdatedAt: call.updated_at,
    ttl: null,
    pollInterval: TASK_POLL_INTERVAL_MS,
  });
}

/**
 * The 2026-07-28 task; `detailed` inlines the result once completed
 * (tasks/get), not on creation, and — awaiting approval — the form
 * elicitation that asks the person (`question`), answered by `tasks/update`.
 */
function task2026(call: CallGet, detailed: boolean, question?: ApprovalQuestion, card?: unknown): Task2026 {
  const { status, statusMessage } = taskStatusOf(call, true);
  return Task2026.parse({
    taskId: taskIdOf(call.thread_id, call.tool_call_id),
    status,
    ...(statusMessage ? { statusMessage } : {}),
    createdAt: call.created_at,
    lastUpdatedAt: call.updated_at,
    ttlMs: null,
    pollIntervalMs: TASK_POLL_INTERVAL_MS,
    ...(detailed && status === 'completed' && call.outcome ? { result: withCard(toolResultOf(call.outcome), card) } : {}),
    ...(detailed && status === 'input_required' ? { inputRequests: question ? { [APPROVAL_INPUT_KEY]: approvalInputRequest(question) } : {} } : {}),
  });
}

/** A task's CallToolResult with the call's compiled card, as a plain `tools/call` answers it (contract section 19). */
function withCard(result: CallToolResult, card: unknown): CallToolResult {
  return card === undefined ? result : { ...result, _meta: { ...result._meta, [UI_SCHEMA_META_KEY]: card } };
}

const notFound = () => new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');

/** Whether a 2026-07-28 request declared the Tasks extension in its own client capabilities. */
function declaredTasks(ctx: ServerContext): boolean {
  const envelope = ClientCapabilitiesEnvelope.safeParse(ctx.mcpReq.envelope ?? ctx.mcpReq._meta ?? {});
  return envelope.success && envelope.data[CLIENT_CAPABILITIES_META_KEY]?.extensions?.[TASKS_EXTENSION_ID] !== undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A short pause that ends early when `until` settles. */
const pause = (ms: number, until: Promise<unknown>) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    void until.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });

/** What the tasks need of the daemon: the call service, the decisions, the secrets to refuse, the log. */
export type McpTasksDeps = CallServiceDeps & DecideDeps & { log: Logger; uiCache?: UiCache | undefined };

/**
 * The tasks of one MCP principal: decides and starts task-augmented
 * `tools/call`s (TaskCalls) and serves `tasks/*` on its server.
 */
export class McpTasks implements TaskCalls {
  constructor(
    private readonly services: McpTasksDeps,
    private readonly principal: McpPrincipal,
    /** Keeps work that outlives its request (an approved call's run) in the daemon's drain at shutdown. */
    private readonly track: <T>(work: Promise<T>) => Promise<T> = (work) => work,
  ) {}

  /** The compiled `ui_schema` of the call's stored outcome (the card its final `tool/result` carries), if it has one. */
  private async card(key: CallKey): Promise<unknown> {
    const row = await this.services.store.read((tx) => tx.messages.getToolMessage(key.userId, key.threadId, key.toolCallId));
    const output = row ? outputOf(row) : undefined;
    return row && output ? uiSchemaOf(this.services.uiCache, row, output) : undefined;
  }

  /** What the person is asked about a call awaiting approval; undefined once it no longer awaits. */
  private async question(key: CallKey): Promise<ApprovalQuestion | undefined> {
    const row = await this.services.store.read((tx) => tx.pendingCalls.get(key));
    if (row?.state !== 'awaiting_approval') return undefined;
    return { action: row.action, input: (JSON.parse(row.args) as { input: unknown }).input, expiresAt: row.expiresAt };
  }

  /**
   * `serve --mcp`: its one token's `exp` gates every task request as it gates `tools/call` — past it, no task is
   * read, listed, cancelled or decided (an approval above all) with it: -32001, restart with a fresh token.
   * HTTP verifies each request's own token before it gets here (no `checkAuth`).
   */
  private async authorized(): Promise<void> {
    const problem = await this.principal.checkAuth?.();
    // A token that cannot be checked now (its issuer's keys out of reach) is no refused token: the host may poll again.
    if (problem?.unavailable) throw new ProtocolError(RpcErrorCode.InternalError, problem.message);
    if (problem) throw new ProtocolError(RpcErrorCode.Unauthorized, problem.message);
  }

  private keyOf(taskId: string): CallKey {
    const call = callOfTaskId(taskId);
    if (!call) throw notFound();
    return { userId: this.principal.session.userId, ...call };
  }

  /** `getCall`, with CALL_NOT_FOUND as MCP's task-not-found and the daemon's wire errors as they are. */
  private async call(key: CallKey): Promise<CallGet> {
    try {
      return await getCall(this.services, key);
    } catch (err) {
      throw mcpError(err);
    }
  }

  requested(request: JSONRPCRequest, ctx: ServerContext, modern: boolean): boolean {
    if (modern) return declaredTasks(ctx);
    const task = isObject(request.params) ? request.params.task : undefined;
    if (task === undefined) return false;
    // 2025-11-25: a malformed `task` (a `ttl` that is no duration) is the client's mistake, and runs no call.
    if (!TaskMetadata2025.safeParse(task).success) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid task param: an object whose ttl, if given, is a non-negative integer of milliseconds or null');
    }
    return true;
  }

  async start(request: JSONRPCRequest, ctx: ServerContext, modern: boolean, run: RequestHandler): Promise<Result> {
    const { task: _asked, ...params } = isObject(request.params) ? request.params : {};
    const { progressToken: _progress, ...meta } = ctx.mcpReq._meta ?? {};
    let identity: { threadId: string; toolCallId: string };
    try {
      identity = callIdentity(this.principal, meta, ctx.sessionId, this.services.secrets);
    } catch {
      // A malformed id: the ordinary path answers exactly as it would without a task.
      return run(request, ctx);
    }
    // The call runs on past this request: named up front (so the task id is known), never stopped by this
    // request's end (tasks/cancel and call/cancel stop it), and reporting no progress (its request is answered).
    const taskMeta = { ...meta, [THREAD_META_KEY]: identity.threadId, [TOOL_CALL_META_KEY]: identity.toolCallId, [TASK_RUN_META_KEY]: true };
    const taskCtx: ServerContext = { ...ctx, mcpReq: { ...ctx.mcpReq, _meta: taskMeta, signal: new AbortController().signal } };
    const ran = run({ ...request, params: { ...params, _meta: taskMeta } }, taskCtx).then(
      (result) => ({ ok: true as const, result }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    let ended = false;
    void ran.then(() => (ended = true));
    const key: CallKey = { userId: this.principal.session.userId, ...identity };
    // The call of these very args: one stored under the id with other args is another call (this one ends
    // DUPLICATE_TOOL_CALL_ID, unstored), and args that do not parse are never stored (answered at once).
    const args = ToolArgs.safeParse(isObject(params.arguments) ? params.arguments : {});
    const digest = args.success ? argsSha256(args.data) : '';
    // A CreateTaskResult only once any daemon can answer tasks/get for it (PostgreSQL: the call is shared).
    for (let wait = 10; ; wait = Math.min(wait * 2, 100)) {
      const finished = ended;
      if (await callVisible(this.services, key, digest)) break;
      if (finished) {
        // It ended without a stored call (refused before it was stored, or a host error): its own answer.
        const outcome = await ran;
        if (outcome.ok) return outcome.result;
        throw outcome.error;
      }
      await pause(wait, ran);
    }
    const call = await this.call(key);
    if (modern) return { resultType: 'task', ...task2026(call, false) };
    // 2025-11-25: a task begins `working`; tasks/get reports where it is now.
    const task = { ...task2025(call), status: 'working' as const, statusMessage: 'The call is running.' };
    return {
      task,
      _meta: { [MODEL_IMMEDIATE_RESPONSE_META_KEY]: `The call runs as task ${task.taskId}; its result comes from tasks/result.` },
    };
  }

  /** Installs the task capability and the `tasks/*` handlers on `server` (before it connects). */
  install(server: TaskServer): void {
    server.serveTasks(this);
    server.registerCapabilities({ tasks: TASKS_CAPABILITY_2025, extensions: { [TASKS_EXTENSION_ID]: {} } });
    const modernOnly = (ctx: ServerContext) => {
      if (!declaredTasks(ctx)) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID]: {} } } });
    };

    server.setRequestHandler('tasks/get', { params: TaskIdParams }, async ({ taskId }, ctx) => {
      await this.authorized();
      if (server.servesModernEra()) {
        modernOnly(ctx);
        const key = this.keyOf(taskId);
        const call = await this.call(key);
        const question = call.state === 'awaiting_approval' ? await this.question(key) : undefined;
        return task2026(call, true, question, call.state === 'done' ? await this.card(key) : undefined);
      }
      return task2025(await this.call(this.keyOf(taskId)));
    });

    // 2025-11-25 only (the SDK refuses it on 2026-07-28, where tasks/get carries the result).
    server.setRequestHandler('tasks/result', { params: TaskIdParams }, async ({ taskId }, ctx) => {
      await this.authorized();
      const key = this.keyOf(taskId);
      const done = await awaitCallDone(this.services, key, ctx.mcpReq.signal).catch((err: unknown) => {
        throw mcpError(err);
      });
      if (!done?.outcome) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'tasks/result was cancelled before the task ended');
      const result = withCard(toolResultOf(done.outcome), await this.card(key));
      return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
    });

    // 2025-11-25 only (not a method of 2026-07-28): the user's own tasks — every call of theirs, since
    // tasks/get answers for each — newest first, the running ones on the first page.
    server.setRequestHandler('tasks/list', { params: ListTasksParams }, async ({ cursor }) => {
      await this.authorized();
      if (server.servesModernEra()) throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');
      const page = await listCalls(this.services, this.principal.session.userId, cursor === undefined ? undefined : afterOf(cursor), TASK_LIST_PAGE).catch(
        (err: unknown) => {
          throw mcpError(err);
        },
      );
      return ListTasksResult2025.parse({ tasks: page.calls.map(task2025), ...(page.next ? { nextCursor: cursorOf(page.next) } : {}) });
    });

    server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, async ({ taskId }, ctx) => {
      await this.authorized();
      const modern = server.servesModernEra();
      if (modern) modernOnly(ctx);
      const key = this.keyOf(taskId);
      const before = await this.call(key);
      if (before.state === 'done') {
        if (modern) return TaskAck.parse({});
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot cancel task: already in terminal status '${taskStatusOf(before, false).status}'`);
      }
      try {
        await cancelCall(this.services, key, 'mcp');
      } catch (err) {
        throw mcpError(err);
      }
      // Cancelled — or its real outcome, when its writes had committed first (contract section 16).
      return modern ? TaskAck.parse({}) : task2025(await this.call(key));
    });

    // 2026-07-28: the person's answer to the task's approval request (tasks/get `inputRequests.approval`):
    // accept approves the call, decline denies it, cancel cancels it (audit surface `mcp`). Acknowledged at
    // once; an approved call runs on, and tasks/get reports it. Other responses, or a call no longer awaiting
    // approval, change nothing.
    server.setRequestHandler('tasks/update', { params: UpdateTaskParams }, async ({ taskId, inputResponses }, ctx) => {
      await this.authorized();
      if (!server.servesModernEra()) throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');
      modernOnly(ctx);
      const key = this.keyOf(taskId);
      const call = await this.call(key);
      const decision = hostDecisionOf(ctx.mcpReq.inputResponses ?? inputResponses);
      if (!decision || call.state !== 'awaiting_approval') return TaskAck.parse({});
      const log = this.services.log.child({ transport: 'mcp', thread_id: key.threadId, tool_call_id: key.toolCallId });
      try {
        if (decision === 'cancel') await endPending(this.services, key, { decision: 'cancel', surface: 'mcp' });
        else if (decision === 'deny') await decideCall(this.services, key, { argsSha256: call.args_sha256, decision, surface: 'mcp' }, log);
        else {
          void this.track(decideCall(this.services, key, { argsSha256: call.args_sha256, decision, surface: 'mcp' }, log)).catch((err: unknown) =>
            log.log('warn', 'the approved task call failed to run', { err: (err as Error).message }),
          );
        }
      } catch (err) {
        throw mcpError(err);
      }
      return TaskAck.parse({});
    });
  }
}

/** A daemon error as MCP answers it: CALL_NOT_FOUND is task-not-found; other wire errors keep their code. */
function mcpError(err: unknown): unknown {
  if (err instanceof DaemonError && err.code === 'CALL_NOT_FOUND') return notFound();
  const wire = asWireError(err);
  return wire ? new ProtocolError(wire.code, wire.message, wire.data) : err;
}
