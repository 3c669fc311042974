/**
 * The wire shapes the inspector reads, imported from src/protocol, where they
 * are declared — never copied. Type-only: nothing here reaches the bundle.
 */
export type {
  ToolError,
  ToolErrorCode,
  ToolResponse,
  ToolResultNotification,
  ToolStatus,
  ToolCallArgs,
} from '../protocol/tool.js';
export type { UiSchema, UiComponent, UiAction } from '../protocol/ui-schema.js';
export type { InputIssue } from '../protocol/tool.js';
export type {
  CallApprovalBody,
  CallCancelResult,
  CallListResult,
  HistoryGetResult,
  HistoryMessage,
  InitializeResult,
  SessionOpenResult,
  ThreadSummary,
  ToolApprovalNotification,
} from '../protocol/methods.js';
