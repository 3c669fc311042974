/* Generated from schemas/*.json by npm run gen (scripts/gen-lib.mjs). Do not edit. */
/* The toolgate wire protocol for TypeScript hosts: no zod, no toolgate source needed. */

export type ToolStatus = "success" | "failure" | "partial";
export type ToolErrorCode =
  | "INVALID_ACTION_INPUT"
  | "UNKNOWN_ACTION"
  | "ACTION_NOT_ALLOWED"
  | "NOT_FOUND"
  | "FORBIDDEN"
  | "CONFLICT"
  | "UNAUTHENTICATED"
  | "TIMEOUT"
  | "INTERNAL"
  | "DUPLICATE_TOOL_CALL_ID"
  | "CANCELLED"
  | "RATE_LIMITED"
  | "RESULT_TOO_LARGE"
  | "APPROVAL_DENIED"
  | "APPROVAL_EXPIRED";
/**
 * The object whose JSON is the text of a call: {status, module, method, data} or {status: "failure", error}.
 */
export type ToolProjection =
  | {
      status: "success" | "partial";
      module: string;
      method: string;
      /**
       * the action result: ids, outcome and counts for chained calls
       */
      data: {
        [k: string]: unknown;
      };
    }
  | {
      status: "failure";
      error: ToolError;
    };
/**
 * One renderable component, discriminated by `type`.
 */
export type UiComponent = UiCard | UiList | UiStack | UiField | UiDatetimeRange | UiStatusBadge | UiText | UiActions;
export type UiTone = "success" | "warning" | "danger" | "info" | "neutral";
export type UiTextStyle = "body" | "muted" | "emphasis" | "code";
export type SessionAuth =
  | {
      type: "bearer";
      token: string;
    }
  | {
      type: "automation";
      job_id: string;
    };
export type HistoryView = "ui" | "context";
export type CallState = "awaiting_approval" | "running" | "done";
export type ShutdownResult = null;
export type InviteStatus = "pending" | "accepted" | "rejected";
/**
 * The one JSON document project-cli prints on stdout.
 */
export type CliDocument = CliSuccess | CliFailure;

/**
 * What the model wrote: the only part of a call it controls.
 */
export interface ToolCallArgs {
  module: string;
  method: string;
  input: {
    [k: string]: unknown;
  };
}
/**
 * The canonical, machine-oriented result of an action.
 */
export interface ToolResult {
  module: string;
  method: string;
  data: unknown;
}
/**
 * A structured tool-level failure. Codes may carry more fields (input_schema, issues, items…).
 */
export interface ToolError {
  code: ToolErrorCode;
  message: string;
  module: string | null;
  method: string | null;
  [k: string]: unknown;
}
/**
 * A call past a quota: retry the same call after retry_after_ms, or tell the user (contract section 20).
 */
export interface RateLimitedError {
  code: "RATE_LIMITED";
  message: string;
  module: string;
  method: string;
  retry_after_ms: number;
  quota: {
    pattern: string;
    period: "minute" | "hour" | "day";
    limit: number;
  };
  [k: string]: unknown;
}
export interface TextContent {
  type: "text";
  text: string;
}
/**
 * The result of tool/invoke: one text item holding the full JSON projection.
 */
export interface ToolResponse {
  tool_call_id: string;
  status: ToolStatus;
  /**
   * @minItems 1
   * @maxItems 1
   */
  content: TextContent[];
}
/**
 * params of a tool/result notification: one non-final partial per batch item, then the final one.
 */
export interface ToolResultNotification {
  thread_id: string;
  tool_call_id: string;
  tool_name: "project_cli";
  tool_call_args: ToolCallArgs;
  status: ToolStatus;
  result?: ToolResult;
  error?: ToolError;
  ui_schema?: UiSchema;
  final: boolean;
}
/**
 * A renderable tool UI, version 1. Carried as `ui_schema` by `tool/result` notifications and by tool messages in the `ui` history view. Front ends render `component` recursively; every component is a plain object discriminated by `type`.
 */
export interface UiSchema {
  /**
   * Vocabulary version. A front end that does not know the version should fall back to the message text.
   */
  version: "1";
  /**
   * Short heading for the whole tool result.
   */
  title?: string;
  component: UiComponent;
}
/**
 * A bordered block with a heading and child components rendered top to bottom.
 */
export interface UiCard {
  type: "card";
  title: string;
  subtitle?: string;
  children: UiComponent[];
}
/**
 * An ordered list of components; `empty_text` is shown when `items` is empty.
 */
export interface UiList {
  type: "list";
  items: UiComponent[];
  empty_text?: string;
}
/**
 * Child components rendered top to bottom without chrome.
 */
export interface UiStack {
  type: "stack";
  children: UiComponent[];
}
/**
 * A labelled value.
 */
export interface UiField {
  type: "field";
  label: string;
  value: string;
}
/**
 * A time span. `start_at` and `end_at` are ISO-8601 date-times as the action returned them; `timezone` (IANA name) is a display preference.
 */
export interface UiDatetimeRange {
  type: "datetime_range";
  label?: string;
  start_at: string;
  end_at: string;
  timezone?: string;
}
/**
 * A short outcome label coloured by `tone`.
 */
export interface UiStatusBadge {
  type: "status_badge";
  label: string;
  tone: UiTone;
}
/**
 * A paragraph of plain text (never markup).
 */
export interface UiText {
  type: "text";
  text: string;
  style?: UiTextStyle;
}
/**
 * Suggested follow-up calls a front end may offer as buttons. Choosing one makes an ordinary `project_cli` call with these args; it grants nothing.
 */
export interface UiActions {
  type: "actions";
  items: UiAction[];
}
export interface UiAction {
  label: string;
  kind: "tool_call";
  module: string;
  method: string;
  /**
   * The `input` object of the suggested call.
   */
  input: {
    [k: string]: unknown;
  };
}
/**
 * What the system keeps of a call: metadata.tool_agent_output of its tool message. ui_hints are internal and never leave the daemon.
 */
export interface ToolAgentOutput {
  tool_name: "project_cli";
  tool_call_id: string;
  tool_call_args: ToolCallArgs;
  status: ToolStatus;
  result: ToolResult | null;
  error: ToolError | null;
  ui_hints: {
    [k: string]: unknown;
  } | null;
}
/**
 * The one tool: its input_schema is a thin JSON Schema of {module, method, input}.
 */
export interface ToolDescriptor {
  name: "project_cli";
  description: string;
  input_schema: {
    [k: string]: unknown;
  };
}
/**
 * Lenient on purpose: a newer host may send more fields to an older daemon; unknown keys (here and in client_info) are ignored.
 */
export interface InitializeParams {
  protocol_version: "1";
  client_info?: {
    name?: string;
    version?: string;
    [k: string]: unknown;
  };
  service_key?: string;
  capabilities?: {
    [k: string]: unknown;
  };
  [k: string]: unknown;
}
export interface InitializeResult {
  protocol_version: "1";
  server_info: {
    name: string;
    version: string;
  };
  capabilities: {
    tools?: string[];
    notifications?: string[];
    history_views?: string[];
    executor?: string;
    batch_max_items?: number;
    [k: string]: unknown;
  };
  tool: ToolDescriptor;
}
export interface SessionOpenParams {
  auth: SessionAuth;
  agent?: string;
  /**
   * @maxItems 100
   */
  enabled_skills?: string[];
}
export interface SessionOpenResult {
  session_id: string;
  user_id: string;
  enabled_skills: string[];
  allowed_actions: string[];
}
export interface ToolInvokeParams {
  session_id: string;
  thread_id: string;
  tool_call_id: string;
  args: ToolCallArgs;
  _meta?: {
    traceparent?: string;
    tracestate?: string;
  };
}
export interface WorkerOutput {
  status: ToolStatus;
  answer: string;
  suggested_actions?: (
    | string
    | {
        [k: string]: unknown;
      }
  )[];
  error?:
    | (
        | string
        | {
            [k: string]: unknown;
          }
      )
    | null;
}
export interface MessageAppendParams {
  session_id: string;
  thread_id: string;
  role: "user" | "assistant";
  content: string;
  worker_output?: WorkerOutput;
}
export interface MessageAppendResult {
  id: string;
}
export interface HistoryGetParams {
  session_id: string;
  thread_id: string;
  view?: HistoryView;
  before?: string;
  limit?: number;
}
/**
 * One stored message. Tool messages carry tool_call_id and status; the ui view adds ui_schema (tool) and worker_output (assistant).
 */
export interface HistoryMessage {
  id: string;
  role: "user" | "assistant" | "tool";
  content: string;
  created_at: string;
  tool_call_id?: string;
  status?: ToolStatus;
  ui_schema?: UiSchema;
  worker_output?: WorkerOutput;
}
export interface HistoryGetResult {
  messages: HistoryMessage[];
  next_before: string | null;
}
/**
 * cursor: the next_cursor of the page before; omit it for the first page.
 */
export interface ThreadListParams {
  session_id: string;
  limit?: number;
  cursor?: string;
}
export interface ThreadSummary {
  thread_id: string;
  created_at: string;
  updated_at: string;
  message_count: number;
}
/**
 * One page, most recently updated first; next_cursor (null on the last page) asks for the next one.
 */
export interface ThreadListResult {
  threads: ThreadSummary[];
  next_cursor: string | null;
}
export interface ThreadSubscribeParams {
  session_id: string;
  thread_id: string;
}
export interface ThreadSubscribeResult {
  thread_id: string;
  subscribed: boolean;
}
export interface CallGetParams {
  session_id: string;
  thread_id: string;
  tool_call_id: string;
}
export interface CallCancelParams {
  session_id: string;
  thread_id: string;
  tool_call_id: string;
}
/**
 * A call's stored state; outcome once done.
 */
export interface CallGetResult {
  thread_id: string;
  tool_call_id: string;
  action: string;
  args_sha256: string;
  state: CallState;
  created_at: string;
  updated_at: string;
  outcome?: ToolResponse;
}
/**
 * The state after the request (call/cancel, call/approve, call/deny): done with its outcome, or the state a decision found.
 */
export interface CallCancelResult {
  state: CallState;
  outcome?: ToolResponse;
}
/**
 * Approves the call whose args have exactly this digest: it runs once, and only then is its credential issued.
 */
export interface CallApproveParams {
  session_id: string;
  thread_id: string;
  tool_call_id: string;
  args_sha256: string;
}
/**
 * Denies the call whose args have exactly this digest: it ends as the failure APPROVAL_DENIED carrying the reason.
 */
export interface CallDenyParams {
  session_id: string;
  thread_id: string;
  tool_call_id: string;
  args_sha256: string;
  reason?: string;
}
/**
 * The body of POST /threads/{thread_id}/calls/{tool_call_id}/approval: a front end's decision on the call, bound to its digest.
 */
export interface CallApprovalBody {
  decision: "approve" | "deny";
  args_sha256: string;
  reason?: string;
}
/**
 * A call waits for a person to approve or deny it (call/approve, call/deny with its args_sha256).
 */
export interface ToolApprovalNotification {
  thread_id: string;
  tool_call_id: string;
  action: string;
  tool_call_args: ToolCallArgs;
  args_sha256: string;
  expires_at: string;
  ui_schema?: UiSchema;
}
/**
 * The session's user's calls awaiting approval, from any connection and any daemon; cursor: the next_cursor of the page before.
 */
export interface CallListParams {
  session_id: string;
  state?: "awaiting_approval";
  limit?: number;
  cursor?: string;
}
/**
 * One page (at most limit, default 50), most recently asked first, each call as its tool/approval carries it; next_cursor (null on the last page) asks for the next one.
 */
export interface CallListResult {
  calls: ToolApprovalNotification[];
  next_cursor: string | null;
}
export interface SkillsListParams {
  session_id: string;
}
export interface SkillSummary {
  name: string;
  description: string;
}
export interface SkillsListResult {
  skills: SkillSummary[];
}
export interface SkillsReadParams {
  session_id: string;
  name: string;
  path?: string;
}
export interface SkillsReadResult {
  name: string;
  path: string;
  content: string;
}
/**
 * The error member of a JSON-RPC error response; -32602 carries data.code (e.g. THREAD_NOT_FOUND) or data.issues.
 */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}
/**
 * A calendar event; ids are strings and end_at is after start_at.
 */
export interface Event {
  id: string;
  owner_id: string;
  title: string;
  start_at: string;
  end_at: string;
  location: string | null;
  description: string | null;
  created_at: string;
  updated_at: string;
}
export interface Contact {
  user_id: string;
  name: string | null;
  phone: string | null;
}
export interface Memory {
  key: string;
  content: string;
  updated_at: string;
}
/**
 * One page: count is the number of items on it; next_cursor (null on the last page) asks for the next one.
 */
export interface CalendarReadData {
  items: Event[];
  count: number;
  next_cursor: string | null;
}
/**
 * calendar.create (one event) and calendar.update.
 */
export interface CalendarEventData {
  event: Event;
}
export interface CalendarBatchItem {
  index: number;
  ok: boolean;
  event?: Event;
  error?: {
    code: string;
    message: string;
    [k: string]: unknown;
  };
}
/**
 * calendar.create with input.items: one outcome per item, in order.
 */
export interface CalendarBatchData {
  items: CalendarBatchItem[];
  created: number;
  failed: number;
}
export interface CalendarDeleteData {
  event_id: string;
  deleted: true;
}
export interface CalendarShareData {
  event_id: string;
  invites: {
    invite_id: string;
    user_id: string;
    status: "pending";
  }[];
  already_accepted?: string[];
}
/**
 * calendar.accept_invite and calendar.reject_invite.
 */
export interface CalendarInviteData {
  invite: {
    invite_id: string;
    event_id: string;
    status: InviteStatus;
  };
}
export interface ContactsReadData {
  items: Contact[];
  count: number;
}
export interface MemoryUpdateData {
  memory: Memory;
}
export interface MemoryForgetData {
  key: string;
  forgotten: true;
}
/**
 * One page: count is the number of items on it; next_cursor (null on the last page) asks for the next one.
 */
export interface MemoryReadData {
  items: Memory[];
  count: number;
  next_cursor: string | null;
}
export interface CliSuccess {
  ok: true;
  module: string;
  method: string;
  data: unknown;
}
/**
 * module/method are null when argv did not name an action.
 */
export interface CliFailure {
  ok: false;
  module: string | null;
  method: string | null;
  error: ToolError;
}
/**
 * Calls per fixed UTC window (the minute, the hour, the day), counted per user in the store across every daemon.
 */
export interface QuotaLimits {
  per_minute?: number;
  per_hour?: number;
  per_day?: number;
}
/**
 * Per-user call quotas of a profile or an automation job, by action pattern (module.method or module.*).
 */
export interface QuotasConfig {
  [k: string]: QuotaLimits;
}
/**
 * Which actions wait for a person to approve the exact call (args digest) before they run, and for how long.
 */
export interface ApprovalConfig {
  ask: string[];
  ttl_s?: number;
}
/**
 * enabled_skills decides which SKILL.md the agent sees; allowed_actions (module.method or module.*) alone decides what it may run; quotas how often, per user; approval.ask which of those wait for a person.
 */
export interface AgentProfileConfig {
  enabled_skills: string[];
  allowed_actions: string[];
  quotas?: QuotasConfig;
  approval?: ApprovalConfig;
}
export interface LimitsConfig {
  call_timeout_ms?: number;
  action_timeout_ms?: {
    [k: string]: number;
  };
  cancel_grace_ms?: number;
  max_message_bytes?: number;
  max_in_flight?: number;
  ping_interval_ms?: number;
  shutdown_grace_ms?: number;
  ws_high_water_bytes?: number;
  ws_max_buffered_bytes?: number;
  max_processes?: number;
  max_sessions_per_connection?: number;
  max_connections_per_user?: number;
  max_subscriptions_per_connection?: number;
  max_result_bytes?: number;
}
export interface StoreConfig {
  synchronous?: "FULL" | "NORMAL";
  pool_size?: number;
  listen_url?: string | null;
}
/**
 * Bearer token policy, and the OAuth authorization server (issuer) whose access tokens are accepted.
 */
export interface AuthConfig {
  max_token_lifetime_s?: number;
  issuer?: string;
  audience?: string;
  jwks_url?: string;
  /**
   * @maxItems 50
   */
  scopes?: string[];
}
export interface HttpConfig {
  allowed_origins?: string[];
  allowed_hosts?: string[];
  public_url?: string;
}
export interface McpConfig {
  agent?: string;
}
/**
 * GET /metrics on the --ws server: on by default for a loopback --host, off beyond unless enabled is set.
 */
export interface MetricsConfig {
  enabled?: boolean;
}
/**
 * The daemon configuration file (--config FILE).
 */
export interface ConfigFile {
  agents: {
    [k: string]: AgentProfileConfig;
  };
  limits?: LimitsConfig;
  store?: StoreConfig;
  auth?: AuthConfig;
  http?: HttpConfig;
  mcp?: McpConfig;
  metrics?: MetricsConfig;
}

/** Every request: its params and result. */
export interface Requests {
  "initialize": { params: InitializeParams; result: InitializeResult };
  "session/open": { params: SessionOpenParams; result: SessionOpenResult };
  "tool/invoke": { params: ToolInvokeParams; result: ToolResponse };
  "message/append": { params: MessageAppendParams; result: MessageAppendResult };
  "history/get": { params: HistoryGetParams; result: HistoryGetResult };
  "thread/list": { params: ThreadListParams; result: ThreadListResult };
  "thread/subscribe": { params: ThreadSubscribeParams; result: ThreadSubscribeResult };
  "thread/unsubscribe": { params: ThreadSubscribeParams; result: ThreadSubscribeResult };
  "call/get": { params: CallGetParams; result: CallGetResult };
  "call/cancel": { params: CallCancelParams; result: CallCancelResult };
  "call/approve": { params: CallApproveParams; result: CallCancelResult };
  "call/deny": { params: CallDenyParams; result: CallCancelResult };
  "call/list": { params: CallListParams; result: CallListResult };
  "skills/list": { params: SkillsListParams; result: SkillsListResult };
  "skills/read": { params: SkillsReadParams; result: SkillsReadResult };
  "shutdown": { params: null | undefined; result: ShutdownResult };
}

/** Every notification and its params (`tool/result` from the daemon, `exit` from the client). */
export interface Notifications {
  "tool/result": { params: ToolResultNotification };
  "tool/approval": { params: ToolApprovalNotification };
  "exit": { params: undefined };
}

export type RequestMethod = keyof Requests;
export type NotificationMethod = keyof Notifications;

export declare const PROTOCOL_VERSION: "1";
export declare const TOOL_NAME: "project_cli";
export declare const TOOL_ERROR_CODES: readonly ToolErrorCode[];
export declare const RpcErrorCode: { readonly ParseError: -32700; readonly InvalidRequest: -32600; readonly MethodNotFound: -32601; readonly InvalidParams: -32602; readonly InternalError: -32603; readonly Unauthorized: -32001; readonly NotInitialized: -32002; readonly Overloaded: -32003; readonly ShuttingDown: -32004; readonly RequestCancelled: -32800 };
export declare const BATCH_MAX_ITEMS: number;
/** The method table: each method's params and result shape ids, and the schema file holding them. */
export declare const METHODS: { readonly [M in RequestMethod]: { readonly params: string | null; readonly result: string } };
export declare const NOTIFICATIONS: { readonly [M in NotificationMethod]: { readonly params: string | null } };
/** Which schema file declares each shape id (`schemas/<file>.json#/$defs/<id>`, or the file's root). */
export declare const SCHEMA_FILE_OF: { readonly [id: string]: string };
/** The JSON Schemas of schemas/, by file name without `.json`. */
export declare const schemas: { readonly [file: string]: object };
