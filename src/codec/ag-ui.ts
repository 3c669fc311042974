/**
 * Stored messages as AG-UI events (https://docs.ag-ui.com), for front ends
 * that already speak AG-UI. The event shapes are `@ag-ui/core`'s own types.
 * Pure: no I/O, and the same inputs always encode to the same events.
 *
 * One stored message is one AG-UI run — RUN_STARTED, the message's events,
 * RUN_FINISHED — so a stream is a sequence of whole runs that the official
 * client's verifier accepts, and a resume can restart at a run boundary
 * (docs/protocols/ag-ui.md says why this and not a MESSAGES_SNAPSHOT):
 *
 * - a user or assistant message: TEXT_MESSAGE_START (its role), one
 *   TEXT_MESSAGE_CONTENT with the whole stored content, TEXT_MESSAGE_END.
 *   They carry no UI: an assistant's `worker_output` is not streamed.
 * - a tool message: TOOL_CALL_START, TOOL_CALL_ARGS (the whole
 *   `tool_call_args` as one JSON delta), TOOL_CALL_END, TOOL_CALL_RESULT
 *   whose `content` is the projection `tool/invoke` returned.
 *
 * The compiled tool UI (contract §4) rides on TOOL_CALL_RESULT twice: as
 * `ui_schema`, an extra top-level field (what existing front ends read),
 * and as `metadata.ui_schema`, AG-UI's open metadata object, which the
 * official client keeps on the rebuilt tool message — its event enforcement
 * strips unknown top-level fields. `ui_hints` never appear here.
 */
import {
  EventType,
  type CustomEvent,
  type RunFinishedEvent,
  type RunStartedEvent,
  type TextMessageContentEvent,
  type TextMessageEndEvent,
  type TextMessageStartEvent,
  type ToolCallArgsEvent,
  type ToolCallEndEvent,
  type ToolCallResultEvent,
  type ToolCallStartEvent,
} from '@ag-ui/core';
import type { ToolAgentOutput } from './tool-output.js';
import type { MessageAppendParams, ToolApprovalNotification } from '../protocol/methods.js';

/** TOOL_CALL_RESULT plus toolgate's `ui_schema`, top-level and in `metadata` (both absent when the action has no stable UI). */
export type AgUiToolCallResultEvent = ToolCallResultEvent & { ui_schema?: unknown };

export type AgUiToolCallEvent = ToolCallStartEvent | ToolCallArgsEvent | ToolCallEndEvent | AgUiToolCallResultEvent;
export type AgUiTextMessageEvent = TextMessageStartEvent | TextMessageContentEvent | TextMessageEndEvent;

/** Every event this codec writes. */
export type AgUiEvent = RunStartedEvent | RunFinishedEvent | AgUiTextMessageEvent | AgUiToolCallEvent | CustomEvent;

/** A stored message as the codec needs it; the daemon reads it from the row. */
export type AgUiMessage =
  | { kind: 'text'; id: string; role: MessageAppendParams['role']; content: string }
  | { kind: 'tool'; id: string; output: ToolAgentOutput; text: string; uiSchema: unknown };

/**
 * The four events of one call, in order: START, ARGS, END, RESULT.
 * RESULT's `content` is `text` exactly and its `messageId` is the tool
 * message the call was stored as. START names no `parentMessageId`: the
 * stored thread has no assistant message that "holds" the call, so AG-UI
 * clients file it under an assistant message of their own, keyed by the
 * call id. `timestamp`, when given, is set on every event (epoch ms).
 */
export function encodeToolCallAsAgUi(
  output: ToolAgentOutput,
  text: string,
  messageId: string,
  uiSchema: unknown,
  timestamp?: number,
): AgUiToolCallEvent[] {
  const toolCallId = output.tool_call_id;
  const at = timestamp === undefined ? {} : { timestamp };
  const result: AgUiToolCallResultEvent = {
    type: EventType.TOOL_CALL_RESULT,
    ...at,
    messageId,
    toolCallId,
    content: text,
    role: 'tool',
  };
  if (uiSchema !== undefined && uiSchema !== null) {
    result.ui_schema = uiSchema;
    result.metadata = { ui_schema: uiSchema };
  }
  return [
    { type: EventType.TOOL_CALL_START, ...at, toolCallId, toolCallName: output.tool_name },
    { type: EventType.TOOL_CALL_ARGS, ...at, toolCallId, delta: JSON.stringify(output.tool_call_args) },
    { type: EventType.TOOL_CALL_END, ...at, toolCallId },
    result,
  ];
}

/** A user or assistant message: START, CONTENT (the whole text; left out when it is empty), END. No UI fields. */
export function encodeTextMessageAsAgUi(
  messageId: string,
  role: 'user' | 'assistant',
  content: string,
  timestamp?: number,
): AgUiTextMessageEvent[] {
  const at = timestamp === undefined ? {} : { timestamp };
  const events: AgUiTextMessageEvent[] = [{ type: EventType.TEXT_MESSAGE_START, ...at, messageId, role }];
  if (content !== '') events.push({ type: EventType.TEXT_MESSAGE_CONTENT, ...at, messageId, delta: content });
  events.push({ type: EventType.TEXT_MESSAGE_END, ...at, messageId });
  return events;
}

/** The run id of a stored message: derived from stored data only, so every daemon streams the same one. */
export function runIdOf(messageId: string): string {
  return `run_${messageId}`;
}

/** One stored message as one whole run of the thread: RUN_STARTED, its events, RUN_FINISHED. */
export function encodeMessageAsAgUiRun(threadId: string, message: AgUiMessage, timestamp?: number): AgUiEvent[] {
  const at = timestamp === undefined ? {} : { timestamp };
  const runId = runIdOf(message.id);
  const body: AgUiEvent[] =
    message.kind === 'text'
      ? encodeTextMessageAsAgUi(message.id, message.role, message.content, timestamp)
      : encodeToolCallAsAgUi(message.output, message.text, message.id, message.uiSchema, timestamp);
  return [
    { type: EventType.RUN_STARTED, ...at, threadId, runId },
    ...body,
    { type: EventType.RUN_FINISHED, ...at, threadId, runId },
  ];
}

/** The CUSTOM event name a call awaiting approval travels under (contract section 17). */
const APPROVAL_EVENT_NAME = 'toolgate.approval';

/**
 * A call awaiting approval as a run of its own: RUN_STARTED, a CUSTOM event
 * `toolgate.approval` whose value is the `tool/approval` notification,
 * RUN_FINISHED. It is no stored message, so its frames carry no event id: a
 * resume restarts at the next stored message.
 */
export function encodeApprovalAsAgUiRun(threadId: string, approval: ToolApprovalNotification): AgUiEvent[] {
  const runId = `run_approval_${approval.tool_call_id}`;
  return [
    { type: EventType.RUN_STARTED, threadId, runId },
    { type: EventType.CUSTOM, name: APPROVAL_EVENT_NAME, value: approval },
    { type: EventType.RUN_FINISHED, threadId, runId },
  ];
}

/**
 * One event as a Server-Sent Events frame: `id:` when given, `event:` (the
 * AG-UI type) and a single `data:` line (JSON never contains a raw newline).
 */
export function sseFrame(id: string | undefined, event: AgUiEvent): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
