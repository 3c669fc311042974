/**
 * The wire shapes the inspector reads, imported from where the daemon
 * declares them — never copied. Type-only: nothing here reaches the bundle.
 * One file, so that when the declarations move (a protocol module), only
 * these lines change.
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
export type { HistoryMessage } from '../daemon/history.js';
export type { SessionOpenResult } from '../daemon/session-open.js';
export type { ThreadSummary } from '../store/store.js';

/** `initialize`'s result, as far as the inspector reads it. */
export interface InitializeResult {
  protocol_version: string;
  server_info?: { name: string; version: string };
}
/** One problem with an input, inside an `INVALID_ACTION_INPUT` error (`error.issues`). */
export type { InputIssue } from '../cli-router/validation.js';
