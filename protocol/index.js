// Generated from src/protocol by npm run gen (scripts/gen-lib.mjs). Do not edit.
// The runtime half of `toolgate/protocol`: method names, constants and the JSON Schemas.
import { readFileSync } from 'node:fs';

export const PROTOCOL_VERSION = "1";
export const TOOL_NAME = "project_cli";
export const TOOL_ERROR_CODES = Object.freeze(["INVALID_ACTION_INPUT","UNKNOWN_ACTION","ACTION_NOT_ALLOWED","NOT_FOUND","FORBIDDEN","CONFLICT","UNAUTHENTICATED","TIMEOUT","INTERNAL","DUPLICATE_TOOL_CALL_ID","CANCELLED","RATE_LIMITED","RESULT_TOO_LARGE","APPROVAL_DENIED","APPROVAL_EXPIRED"]);
export const RpcErrorCode = Object.freeze({"ParseError":-32700,"InvalidRequest":-32600,"MethodNotFound":-32601,"InvalidParams":-32602,"InternalError":-32603,"Unauthorized":-32001,"NotInitialized":-32002,"Overloaded":-32003,"ShuttingDown":-32004,"RequestCancelled":-32800});
export const BATCH_MAX_ITEMS = 50;
export const METHODS = Object.freeze({
  "initialize": {
    "params": "InitializeParams",
    "result": "InitializeResult"
  },
  "session/open": {
    "params": "SessionOpenParams",
    "result": "SessionOpenResult"
  },
  "tool/invoke": {
    "params": "ToolInvokeParams",
    "result": "ToolResponse"
  },
  "message/append": {
    "params": "MessageAppendParams",
    "result": "MessageAppendResult"
  },
  "history/get": {
    "params": "HistoryGetParams",
    "result": "HistoryGetResult"
  },
  "thread/list": {
    "params": "ThreadListParams",
    "result": "ThreadListResult"
  },
  "thread/subscribe": {
    "params": "ThreadSubscribeParams",
    "result": "ThreadSubscribeResult"
  },
  "thread/unsubscribe": {
    "params": "ThreadSubscribeParams",
    "result": "ThreadSubscribeResult"
  },
  "call/get": {
    "params": "CallGetParams",
    "result": "CallGetResult"
  },
  "call/cancel": {
    "params": "CallCancelParams",
    "result": "CallCancelResult"
  },
  "call/approve": {
    "params": "CallApproveParams",
    "result": "CallCancelResult"
  },
  "call/deny": {
    "params": "CallDenyParams",
    "result": "CallCancelResult"
  },
  "call/list": {
    "params": "CallListParams",
    "result": "CallListResult"
  },
  "skills/list": {
    "params": "SkillsListParams",
    "result": "SkillsListResult"
  },
  "skills/read": {
    "params": "SkillsReadParams",
    "result": "SkillsReadResult"
  },
  "shutdown": {
    "params": null,
    "result": "ShutdownResult"
  }
});
export const NOTIFICATIONS = Object.freeze({
  "tool/result": {
    "params": "ToolResultNotification"
  },
  "tool/approval": {
    "params": "ToolApprovalNotification"
  },
  "exit": {
    "params": null
  }
});
export const SCHEMA_FILE_OF = Object.freeze({
  "AgentProfileConfig": "config",
  "ApprovalConfig": "config",
  "AuthConfig": "config",
  "CalendarBatchData": "actions",
  "CalendarBatchItem": "actions",
  "CalendarDeleteData": "actions",
  "CalendarEventData": "actions",
  "CalendarInviteData": "actions",
  "CalendarReadData": "actions",
  "CalendarShareData": "actions",
  "CallApprovalBody": "protocol",
  "CallApproveParams": "protocol",
  "CallCancelParams": "protocol",
  "CallCancelResult": "protocol",
  "CallDenyParams": "protocol",
  "CallGetParams": "protocol",
  "CallGetResult": "protocol",
  "CallListParams": "protocol",
  "CallListResult": "protocol",
  "CallState": "protocol",
  "CliDocument": "cli-output",
  "CliFailure": "cli-output",
  "CliSuccess": "cli-output",
  "ConfigFile": "config",
  "Contact": "actions",
  "ContactsReadData": "actions",
  "Event": "actions",
  "HistoryGetParams": "protocol",
  "HistoryGetResult": "protocol",
  "HistoryMessage": "protocol",
  "HistoryView": "protocol",
  "HttpConfig": "config",
  "InitializeParams": "protocol",
  "InitializeResult": "protocol",
  "InviteStatus": "actions",
  "LimitsConfig": "config",
  "McpConfig": "config",
  "Memory": "actions",
  "MemoryForgetData": "actions",
  "MemoryReadData": "actions",
  "MemoryUpdateData": "actions",
  "MessageAppendParams": "protocol",
  "MessageAppendResult": "protocol",
  "MetricsConfig": "config",
  "QuotaLimits": "config",
  "QuotasConfig": "config",
  "RateLimitedError": "tool-call",
  "RpcError": "protocol",
  "SessionAuth": "protocol",
  "SessionOpenParams": "protocol",
  "SessionOpenResult": "protocol",
  "ShutdownResult": "protocol",
  "SkillSummary": "protocol",
  "SkillsListParams": "protocol",
  "SkillsListResult": "protocol",
  "SkillsReadParams": "protocol",
  "SkillsReadResult": "protocol",
  "StoreConfig": "config",
  "TextContent": "tool-call",
  "ThreadListParams": "protocol",
  "ThreadListResult": "protocol",
  "ThreadSubscribeParams": "protocol",
  "ThreadSubscribeResult": "protocol",
  "ThreadSummary": "protocol",
  "ToolAgentOutput": "tool-call",
  "ToolApprovalNotification": "protocol",
  "ToolCallArgs": "tool-call",
  "ToolDescriptor": "protocol",
  "ToolError": "tool-call",
  "ToolErrorCode": "tool-call",
  "ToolInvokeParams": "protocol",
  "ToolProjection": "tool-call",
  "ToolResponse": "tool-call",
  "ToolResult": "tool-call",
  "ToolResultNotification": "tool-call",
  "ToolStatus": "tool-call",
  "UiSchema": "ui-schema",
  "WorkerOutput": "protocol",
  "action": "ui-schema",
  "actions": "ui-schema",
  "card": "ui-schema",
  "component": "ui-schema",
  "datetime_range": "ui-schema",
  "field": "ui-schema",
  "list": "ui-schema",
  "stack": "ui-schema",
  "status_badge": "ui-schema",
  "text": "ui-schema",
  "text_style": "ui-schema",
  "tone": "ui-schema"
});
const FILES = ["tool-call","ui-schema","protocol","actions","cli-output","config"];
export const schemas = Object.freeze(
  Object.fromEntries(FILES.map((f) => [f, JSON.parse(readFileSync(new URL(`../schemas/${f}.json`, import.meta.url), 'utf8'))])),
);
