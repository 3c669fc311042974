/**
 * Every JSON-RPC method of the toolgate protocol, declared once: its params
 * and its result as zod schemas, and one typed vscode-jsonrpc
 * `RequestType`/`NotificationType` that both the daemon and clients use.
 *
 * Params reject unknown keys (except `initialize`, lenient on purpose so a
 * newer host can talk to an older daemon) so that a typo is an error, not a
 * silently ignored field.
 */
import { z } from 'zod';
import { NotificationType, NotificationType0, ParameterStructures, RequestType, RequestType0 } from 'vscode-jsonrpc';
import { named } from './registry.js';
import { DEPTH_MESSAGE, Id, JsonObject, shallow } from './json.js';
import { MAX_BEARER_TOKEN_LENGTH } from './limits.js';
import { ToolCallArgs, ToolDescriptor, ToolResponse, ToolResultNotification, ToolStatus } from './tool.js';
import { UiSchema } from './ui-schema.js';

export const PROTOCOL_VERSION = '1';

const p = <T extends z.ZodType>(id: string, schema: T, description?: string): T => named('protocol', id, schema, description);

// ---------------------------------------------------------------------------------------------
// initialize

export const InitializeParams = p(
  'InitializeParams',
  // Loose, so the published schema says what the daemon does: unknown keys are accepted and ignored.
  z.looseObject({
    protocol_version: z.literal(PROTOCOL_VERSION),
    client_info: z.looseObject({ name: z.string().max(200), version: z.string().max(100) }).partial().optional(),
    service_key: z.string().max(1000).optional(),
    capabilities: JsonObject.optional(),
  }),
  'Lenient on purpose: a newer host may send more fields to an older daemon; unknown keys (here and in client_info) are ignored.',
);

export const InitializeResult = p(
  'InitializeResult',
  z.strictObject({
    protocol_version: z.literal(PROTOCOL_VERSION),
    server_info: z.strictObject({ name: z.string(), version: z.string() }),
    capabilities: z.looseObject({
      tools: z.array(z.string()).optional(),
      notifications: z.array(z.string()).optional(),
      history_views: z.array(z.string()).optional(),
      executor: z.string().optional(),
      batch_max_items: z.number().int().optional(),
    }),
    tool: ToolDescriptor,
  }),
);

// ---------------------------------------------------------------------------------------------
// session/open

export const SessionAuth = p(
  'SessionAuth',
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('bearer'), token: z.string().min(1).max(MAX_BEARER_TOKEN_LENGTH) }),
    z.strictObject({ type: z.literal('automation'), job_id: Id }),
  ]),
);

export const SessionOpenParams = p(
  'SessionOpenParams',
  z.strictObject({
    auth: SessionAuth,
    agent: z.string().min(1).max(100).optional(),
    enabled_skills: z.array(z.string().min(1).max(100)).max(100).optional(),
  }),
);

export const SessionOpenResult = p(
  'SessionOpenResult',
  z.strictObject({
    session_id: z.string(),
    user_id: z.string(),
    enabled_skills: z.array(z.string()),
    allowed_actions: z.array(z.string()),
  }),
);

// ---------------------------------------------------------------------------------------------
// tool/invoke (+ tool/result)

/** @deprecated name kept for existing imports: the args are {@link ToolCallArgs}. */
export const ToolArgs = ToolCallArgs;

export const ToolInvokeParams = p(
  'ToolInvokeParams',
  z.strictObject({
    session_id: Id,
    thread_id: Id,
    tool_call_id: Id,
    args: ToolCallArgs,
    // W3C trace context of the host's own span: the call's span becomes its child (docs/operations.md).
    _meta: z.strictObject({ traceparent: z.string().max(256).optional(), tracestate: z.string().max(512).optional() }).optional(),
  }),
);

export const ToolInvokeResult = ToolResponse;

// ---------------------------------------------------------------------------------------------
// message/append

export const WorkerOutput = p(
  'WorkerOutput',
  z
    .strictObject({
      status: ToolStatus,
      answer: z.string(),
      suggested_actions: z.array(z.union([z.string(), JsonObject])).optional(),
      error: z.union([z.string(), JsonObject]).nullable().optional(),
    })
    .refine(shallow, DEPTH_MESSAGE),
);

export const MessageAppendParams = p(
  'MessageAppendParams',
  z.strictObject({
    session_id: Id,
    thread_id: Id,
    role: z.enum(['user', 'assistant']),
    content: z.string().max(1_000_000),
    worker_output: WorkerOutput.optional(),
  }),
);

export const MessageAppendResult = p('MessageAppendResult', z.strictObject({ id: z.string() }));

// ---------------------------------------------------------------------------------------------
// history/get

export const HistoryView = p('HistoryView', z.enum(['ui', 'context']));

export const HistoryGetParams = p(
  'HistoryGetParams',
  z.strictObject({
    session_id: Id,
    thread_id: Id,
    view: HistoryView.optional(),
    before: z.string().min(1).max(200).optional(),
    limit: z.number().int().min(1).max(500).optional(),
  }),
);

export const HistoryMessage = p(
  'HistoryMessage',
  z.strictObject({
    id: z.string(),
    role: z.enum(['user', 'assistant', 'tool']),
    content: z.string(),
    created_at: z.string(),
    tool_call_id: z.string().optional(),
    status: ToolStatus.optional(),
    ui_schema: UiSchema.optional(),
    worker_output: WorkerOutput.optional(),
  }),
  'One stored message. Tool messages carry tool_call_id and status; the ui view adds ui_schema (tool) and worker_output (assistant).',
);

export const HistoryGetResult = p(
  'HistoryGetResult',
  z.strictObject({ messages: z.array(HistoryMessage), next_before: z.string().nullable() }),
);

// ---------------------------------------------------------------------------------------------
// thread/list, thread/subscribe, thread/unsubscribe

export const ThreadListParams = p(
  'ThreadListParams',
  z.strictObject({ session_id: Id, limit: z.number().int().min(1).max(500).optional(), cursor: z.string().min(1).max(1000).optional() }),
  'cursor: the next_cursor of the page before; omit it for the first page.',
);

export const ThreadSummary = p(
  'ThreadSummary',
  z.strictObject({ thread_id: z.string(), created_at: z.string(), updated_at: z.string(), message_count: z.number().int().nonnegative() }),
);

export const ThreadListResult = p(
  'ThreadListResult',
  z.strictObject({ threads: z.array(ThreadSummary), next_cursor: z.string().nullable() }),
  'One page, most recently updated first; next_cursor (null on the last page) asks for the next one.',
);

export const ThreadSubscribeParams = p('ThreadSubscribeParams', z.strictObject({ session_id: Id, thread_id: Id }));
export const ThreadUnsubscribeParams = ThreadSubscribeParams;

export const ThreadSubscribeResult = p('ThreadSubscribeResult', z.strictObject({ thread_id: z.string(), subscribed: z.boolean() }));
export const ThreadUnsubscribeResult = ThreadSubscribeResult;

// ---------------------------------------------------------------------------------------------
// call/get, call/cancel — a call's stored lifecycle

/** Names one call of the session's user: `(thread_id, tool_call_id)`. */
export const CallGetParams = p('CallGetParams', z.strictObject({ session_id: Id, thread_id: Id, tool_call_id: Id }));
export const CallCancelParams = p('CallCancelParams', z.strictObject({ session_id: Id, thread_id: Id, tool_call_id: Id }));

/** `awaiting_approval` (a person decides first), `running`, `done` (its outcome is stored). */
export const CallState = p('CallState', z.enum(['awaiting_approval', 'running', 'done']));

export const CallGetResult = p(
  'CallGetResult',
  z.strictObject({
    thread_id: z.string(),
    tool_call_id: z.string(),
    /** `module.method` as the model wrote them. */
    action: z.string(),
    /** Lowercase hex SHA-256 of the canonical JSON of `args` (keys sorted, no whitespace): the digest the credential binds. */
    args_sha256: z.string().regex(/^[0-9a-f]{64}$/),
    state: CallState,
    created_at: z.string(),
    updated_at: z.string(),
    /** The call's ToolResponse, once `done`. */
    outcome: ToolResponse.optional(),
  }),
  "A call's stored state; outcome once done.",
);

export const CallCancelResult = p(
  'CallCancelResult',
  z.strictObject({ state: CallState, outcome: ToolResponse.optional() }),
  'The state after the request (call/cancel, call/approve, call/deny): done with its outcome, or the state a decision found.',
);

// ---------------------------------------------------------------------------------------------
// call/approve, call/deny, tool/approval — approval bound to the exact call (contract section 17)

const ArgsSha256 = z.string().regex(/^[0-9a-f]{64}$/, 'the lowercase hex SHA-256 of the canonical JSON of args');

export const CallApproveParams = p(
  'CallApproveParams',
  z.strictObject({ session_id: Id, thread_id: Id, tool_call_id: Id, args_sha256: ArgsSha256 }),
  'Approves the call whose args have exactly this digest: it runs once, and only then is its credential issued.',
);

export const CallDenyParams = p(
  'CallDenyParams',
  z.strictObject({ session_id: Id, thread_id: Id, tool_call_id: Id, args_sha256: ArgsSha256, reason: z.string().max(2000).optional() }),
  'Denies the call whose args have exactly this digest: it ends as the failure APPROVAL_DENIED carrying the reason.',
);

export const CallApprovalBody = p(
  'CallApprovalBody',
  z.strictObject({ decision: z.enum(['approve', 'deny']), args_sha256: ArgsSha256, reason: z.string().max(2000).optional() }),
  'The body of POST /threads/{thread_id}/calls/{tool_call_id}/approval: a front end\'s decision on the call, bound to its digest.',
);

export const ToolApprovalNotification = p(
  'ToolApprovalNotification',
  z.strictObject({
    thread_id: z.string(),
    tool_call_id: z.string(),
    /** `module.method`. */
    action: z.string(),
    /** The args exactly as the model wrote them: what an approval runs. */
    tool_call_args: ToolCallArgs,
    args_sha256: ArgsSha256,
    /** When the call fails APPROVAL_EXPIRED unless decided first (ISO-8601 UTC). */
    expires_at: z.string(),
    /** A confirmation card of what will change, compiled like every ui_schema. */
    ui_schema: UiSchema.optional(),
  }),
  'A call waits for a person to approve or deny it (call/approve, call/deny with its args_sha256).',
);

export const CallListParams = p(
  'CallListParams',
  z.strictObject({
    session_id: Id,
    /** Which calls: those awaiting approval (the only state listed, and the default). */
    state: z.literal('awaiting_approval').optional(),
    limit: z.number().int().min(1).max(100).optional(),
    cursor: z.string().min(1).max(1000).optional(),
  }),
  "The session's user's calls awaiting approval, from any connection and any daemon; cursor: the next_cursor of the page before.",
);

export const CallListResult = p(
  'CallListResult',
  z.strictObject({ calls: z.array(ToolApprovalNotification), next_cursor: z.string().nullable() }),
  'One page (at most limit, default 50), most recently asked first, each call as its tool/approval carries it; next_cursor (null on the last page) asks for the next one.',
);

// ---------------------------------------------------------------------------------------------
// skills/list, skills/read

export const SkillsListParams = p('SkillsListParams', z.strictObject({ session_id: Id }));

export const SkillSummary = p('SkillSummary', z.strictObject({ name: z.string(), description: z.string() }));

export const SkillsListResult = p('SkillsListResult', z.strictObject({ skills: z.array(SkillSummary) }));

export const SkillsReadParams = p(
  'SkillsReadParams',
  z.strictObject({ session_id: Id, name: z.string().min(1).max(100), path: z.string().min(1).max(500).optional() }),
);

export const SkillsReadResult = p('SkillsReadResult', z.strictObject({ name: z.string(), path: z.string(), content: z.string() }));

// ---------------------------------------------------------------------------------------------
// shutdown, exit

/** LSP's shutdown takes no params; whatever a client sends along is ignored. */
export const ShutdownParams = z.unknown();
export const ShutdownResult = p('ShutdownResult', z.null());

// ---------------------------------------------------------------------------------------------
// Typed request and notification types, one per method, shared by daemon and clients.

const byName = ParameterStructures.byName;
type P<S extends z.ZodType> = z.input<S>;
type R<S extends z.ZodType> = z.output<S>;

/**
 * One JSON-RPC request, declared once: its wire name, its params and result
 * schemas with their `$defs` ids in `schemas/`, and the typed vscode-jsonrpc
 * `RequestType` clients send it with. The daemon registers its handler by
 * this declaration (src/rpc/dispatcher.ts `on(…)`), the conformance runner
 * and the generated host types read `REQUESTS`, built from these alone.
 */
export interface RequestSpec<M extends string = string, PS extends z.ZodType = z.ZodType, RS extends z.ZodType = z.ZodType> {
  readonly method: M;
  readonly params: PS;
  readonly result: RS;
  /** The params' `$defs` id; null: no params (`shutdown`). */
  readonly paramsId: string | null;
  readonly resultId: string;
}

function request<M extends string, PS extends z.ZodType, RS extends z.ZodType>(method: M, params: PS, result: RS, ids: { params: string; result: string }) {
  const spec: RequestSpec<M, PS, RS> = { method, params, result, paramsId: ids.params, resultId: ids.result };
  return { ...spec, type: new RequestType<P<PS>, R<RS>, void>(method, byName) };
}

export const Initialize = request('initialize', InitializeParams, InitializeResult, { params: 'InitializeParams', result: 'InitializeResult' });
export const SessionOpen = request('session/open', SessionOpenParams, SessionOpenResult, { params: 'SessionOpenParams', result: 'SessionOpenResult' });
export const ToolInvoke = request('tool/invoke', ToolInvokeParams, ToolInvokeResult, { params: 'ToolInvokeParams', result: 'ToolResponse' });
export const MessageAppend = request('message/append', MessageAppendParams, MessageAppendResult, { params: 'MessageAppendParams', result: 'MessageAppendResult' });
export const HistoryGet = request('history/get', HistoryGetParams, HistoryGetResult, { params: 'HistoryGetParams', result: 'HistoryGetResult' });
export const ThreadList = request('thread/list', ThreadListParams, ThreadListResult, { params: 'ThreadListParams', result: 'ThreadListResult' });
export const ThreadSubscribe = request('thread/subscribe', ThreadSubscribeParams, ThreadSubscribeResult, { params: 'ThreadSubscribeParams', result: 'ThreadSubscribeResult' });
export const ThreadUnsubscribe = request('thread/unsubscribe', ThreadUnsubscribeParams, ThreadUnsubscribeResult, {
  params: 'ThreadSubscribeParams',
  result: 'ThreadSubscribeResult',
});
export const CallGet = request('call/get', CallGetParams, CallGetResult, { params: 'CallGetParams', result: 'CallGetResult' });
export const CallCancel = request('call/cancel', CallCancelParams, CallCancelResult, { params: 'CallCancelParams', result: 'CallCancelResult' });
export const CallApprove = request('call/approve', CallApproveParams, CallCancelResult, { params: 'CallApproveParams', result: 'CallCancelResult' });
export const CallDeny = request('call/deny', CallDenyParams, CallCancelResult, { params: 'CallDenyParams', result: 'CallCancelResult' });
export const CallList = request('call/list', CallListParams, CallListResult, { params: 'CallListParams', result: 'CallListResult' });
export const SkillsList = request('skills/list', SkillsListParams, SkillsListResult, { params: 'SkillsListParams', result: 'SkillsListResult' });
export const SkillsRead = request('skills/read', SkillsReadParams, SkillsReadResult, { params: 'SkillsReadParams', result: 'SkillsReadResult' });
/** LSP's `shutdown`: no params (`RequestType0`); whatever a client sends along is ignored. */
const shutdownSpec: RequestSpec<'shutdown', typeof ShutdownParams, typeof ShutdownResult> = {
  method: 'shutdown',
  params: ShutdownParams,
  result: ShutdownResult,
  paramsId: null,
  resultId: 'ShutdownResult',
};
export const Shutdown = { ...shutdownSpec, type: new RequestType0<null, void>(shutdownSpec.method) };

export const InitializeRequest = Initialize.type;
export const SessionOpenRequest = SessionOpen.type;
export const ToolInvokeRequest = ToolInvoke.type;
export const MessageAppendRequest = MessageAppend.type;
export const HistoryGetRequest = HistoryGet.type;
export const ThreadListRequest = ThreadList.type;
export const ThreadSubscribeRequest = ThreadSubscribe.type;
export const ThreadUnsubscribeRequest = ThreadUnsubscribe.type;
export const CallGetRequest = CallGet.type;
export const CallCancelRequest = CallCancel.type;
export const CallApproveRequest = CallApprove.type;
export const CallDenyRequest = CallDeny.type;
export const CallListRequest = CallList.type;
export const SkillsListRequest = SkillsList.type;
export const SkillsReadRequest = SkillsRead.type;
export const ShutdownRequest = Shutdown.type;
export const ExitNotification = new NotificationType0('exit');
export const ToolResultNotificationType = new NotificationType<R<typeof ToolResultNotification>>('tool/result', byName);
export const ToolApprovalNotificationType = new NotificationType<R<typeof ToolApprovalNotification>>('tool/approval', byName);

/** Every request of the protocol, in the order docs/protocols/methods.md lists them. */
export const REQUEST_SPECS = [Initialize, SessionOpen, ToolInvoke, MessageAppend, HistoryGet, ThreadList, ThreadSubscribe, ThreadUnsubscribe, CallGet, CallCancel, CallApprove, CallDeny, CallList, SkillsList, SkillsRead, Shutdown] as const;

type AnyRequest = (typeof REQUEST_SPECS)[number];

/**
 * The method table, built from the declarations above: each request's name →
 * its schemas and the ids of its params and result shapes (the `$defs` keys in
 * `schemas/`). The daemon dispatches by these names, the conformance runner
 * validates by these ids.
 */
export const REQUESTS = Object.fromEntries(
  REQUEST_SPECS.map(({ method, params, result, paramsId, resultId }) => [method, { params, result, paramsId, resultId }]),
) as { readonly [S in AnyRequest as S['method']]: Pick<S, 'params' | 'result' | 'paramsId' | 'resultId'> };

export type RequestMethod = keyof typeof REQUESTS;

/** Notifications: the daemon sends `tool/result` and `tool/approval`; the client sends `exit` (no params). */
export const NOTIFICATIONS = {
  'tool/result': { params: ToolResultNotification, paramsId: 'ToolResultNotification' },
  'tool/approval': { params: ToolApprovalNotification, paramsId: 'ToolApprovalNotification' },
  exit: { params: null, paramsId: null },
} as const;

export type InitializeParams = z.infer<typeof InitializeParams>;
export type CallGetParams = z.infer<typeof CallGetParams>;
export type CallGetResult = z.infer<typeof CallGetResult>;
export type CallCancelParams = z.infer<typeof CallCancelParams>;
export type CallCancelResult = z.infer<typeof CallCancelResult>;
export type CallState = z.infer<typeof CallState>;
export type CallApproveParams = z.infer<typeof CallApproveParams>;
export type CallDenyParams = z.infer<typeof CallDenyParams>;
export type ToolApprovalNotification = z.infer<typeof ToolApprovalNotification>;
export type CallListParams = z.infer<typeof CallListParams>;
export type CallListResult = z.infer<typeof CallListResult>;
export type CallApprovalBody = z.infer<typeof CallApprovalBody>;
export type InitializeResult = z.infer<typeof InitializeResult>;
export type SessionAuth = z.infer<typeof SessionAuth>;
export type SessionOpenParams = z.infer<typeof SessionOpenParams>;
export type SessionOpenResult = z.infer<typeof SessionOpenResult>;
export type ToolInvokeParams = z.infer<typeof ToolInvokeParams>;
export type WorkerOutput = z.infer<typeof WorkerOutput>;
export type MessageAppendParams = z.infer<typeof MessageAppendParams>;
export type MessageAppendResult = z.infer<typeof MessageAppendResult>;
export type HistoryView = z.infer<typeof HistoryView>;
export type HistoryGetParams = z.infer<typeof HistoryGetParams>;
export type HistoryMessage = z.infer<typeof HistoryMessage>;
export type HistoryGetResult = z.infer<typeof HistoryGetResult>;
export type ThreadListParams = z.infer<typeof ThreadListParams>;
export type ThreadSummary = z.infer<typeof ThreadSummary>;
export type ThreadListResult = z.infer<typeof ThreadListResult>;
export type ThreadSubscribeParams = z.infer<typeof ThreadSubscribeParams>;
export type ThreadSubscribeResult = z.infer<typeof ThreadSubscribeResult>;
export type SkillsListParams = z.infer<typeof SkillsListParams>;
export type SkillSummary = z.infer<typeof SkillSummary>;
export type SkillsListResult = z.infer<typeof SkillsListResult>;
export type SkillsReadParams = z.infer<typeof SkillsReadParams>;
export type SkillsReadResult = z.infer<typeof SkillsReadResult>;
