/**
 * A stored tool call as AG-UI events, for front ends that already speak
 * AG-UI (https://docs.ag-ui.com): TOOL_CALL_START, TOOL_CALL_ARGS,
 * TOOL_CALL_END, TOOL_CALL_RESULT. The event shapes are `@ag-ui/core`'s own
 * types. Pure: no I/O, and the same inputs always encode to the same events.
 *
 * The one toolgate extension is `ui_schema` on TOOL_CALL_RESULT: the
 * compiled tool UI (contract §4), under the same name as on `tool/result`
 * and in `history/get`, as an extra top-level field. AG-UI's event
 * validators (`@ag-ui/core/schemas`) are loose objects, so the event stays
 * valid AG-UI and a consumer that does not know the field ignores it.
 * `ui_hints` never appear here.
 */
import {
  EventType,
  type ToolCallArgsEvent,
  type ToolCallEndEvent,
  type ToolCallResultEvent,
  type ToolCallStartEvent,
} from '@ag-ui/core';
import type { ToolAgentOutput } from './tool-output.js';

/** TOOL_CALL_RESULT plus toolgate's `ui_schema` (absent when the action has no stable UI). */
export type AgUiToolCallResultEvent = ToolCallResultEvent & { ui_schema?: unknown };

/** The events one tool call encodes to. */
export type AgUiEvent = ToolCallStartEvent | ToolCallArgsEvent | ToolCallEndEvent | AgUiToolCallResultEvent;

/**
 * The four events of one call, in order: START, ARGS (the whole
 * `tool_call_args` as one JSON delta), END, RESULT. RESULT's `content` is
 * `text` exactly — the projection `tool/invoke` returned — and its
 * `messageId` is the tool message the call was stored as.
 *
 * `threadId` is not written into the events: AG-UI scopes tool-call events
 * by the stream that carries them (one stream per thread). `timestamp`, when
 * given, is set on every event (milliseconds since the epoch).
 */
export function encodeToolCallAsAgUi(
  threadId: string,
  output: ToolAgentOutput,
  text: string,
  messageId: string,
  uiSchema: unknown | undefined,
  timestamp?: number,
): AgUiEvent[] {
  void threadId;
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
  if (uiSchema !== undefined && uiSchema !== null) result.ui_schema = uiSchema;
  return [
    { type: EventType.TOOL_CALL_START, ...at, toolCallId, toolCallName: output.tool_name },
    { type: EventType.TOOL_CALL_ARGS, ...at, toolCallId, delta: JSON.stringify(output.tool_call_args) },
    { type: EventType.TOOL_CALL_END, ...at, toolCallId },
    result,
  ];
}

/**
 * One event as a Server-Sent Events frame: `id:`, `event:` (the AG-UI type)
 * and a single `data:` line (JSON never contains a raw newline).
 */
export function sseFrame(id: string, event: AgUiEvent): string {
  return `id: ${id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
