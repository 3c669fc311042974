/**
 * How a call is answered to its caller without running it again: a stored
 * call replayed (or refused as a duplicate id), a refusal that only the
 * caller hears of, and the response built from a tool output.
 */
import { argsSha256 } from '../codec/canonical-json.js';
import type { CliDocument } from '../cli-router/core.js';
import { TOOL_NAME, notificationsFor, projectionOf, type ToolAgentOutput } from '../codec/tool-output.js';
import { deriveUiHints } from '../codec/ui-hints.js';
import type { ToolProjection, ToolResponse } from '../protocol/tool.js';
import type { MessageRow } from '../store/store.js';
import type { Call } from './call.js';
import type { UiCache } from '../threads/ui-cache.js';
import { outputOf, toolResultsOf } from '../threads/message-views.js';
import type { Peer } from '../runtime/peer.js';
import { messageOfOutput, type ToolMessage } from './tool-message.js';
import { compileStoredUi } from '../threads/ui.js';

/** A call's answer: the response, and the object its text is the JSON of (MCP's `structuredContent`). */
export interface ToolCallAnswer {
  response: ToolResponse;
  projection: ToolProjection;
}

export function messageOfDoc(doc: CliDocument, args: Call['args'], toolCallId: string): ToolMessage {
  return messageOfOutput({
    tool_name: TOOL_NAME,
    tool_call_id: toolCallId,
    tool_call_args: args,
    status: 'failure',
    result: null,
    error: doc.ok ? null : doc.error,
    ui_hints: null,
  });
}

/** A stored call answered again: its stored text, its notifications again — unless the id was used with other args. */
export function replay(deps: { uiCache: UiCache }, conn: Peer, call: Call, row: MessageRow): ToolCallAnswer {
  const output = outputOf(row);
  if (!output) throw new Error(`stored tool message ${row.id} holds no tool output`);
  const { args } = call;
  if (argsSha256(output.tool_call_args) !== call.argsSha256) {
    return direct(conn, call.threadId, messageOfOutput({
      ...output,
      tool_call_args: args,
      status: 'failure',
      result: null,
      ui_hints: null,
      error: {
        code: 'DUPLICATE_TOOL_CALL_ID',
        message: 'this tool_call_id was already used with other arguments',
        module: args.module,
        method: args.method,
      },
    }));
  }
  for (const n of toolResultsOf(deps.uiCache, call.threadId, row)) conn.notify('tool/result', n);
  return answerOf(output, row.content, projectionOf(output));
}

/** The id is taken by a call awaiting approval with other args: refused as a duplicate id, only the caller hears of it. */
export function duplicateOfPending(conn: Peer, call: Call): ToolCallAnswer {
  const { module, method } = call.args;
  const doc = { ok: false as const, module, method, error: { code: 'DUPLICATE_TOOL_CALL_ID' as const, message: 'this tool_call_id was already used with other arguments', module, method } };
  return direct(conn, call.threadId, messageOfDoc(doc, call.args, call.toolCallId));
}

/** An answer that only the caller hears of: its notifications, sent to it alone, then the response. */
export function direct(conn: Peer, threadId: string, message: ToolMessage): ToolCallAnswer {
  for (const n of notificationsFor(threadId, message.output, compileStoredUi, deriveUiHints)) conn.notify('tool/result', n);
  return answerOf(message.output, message.text, message.projection);
}

export function answerOf(output: ToolAgentOutput, text: string, projection: ToolProjection): ToolCallAnswer {
  return { response: { tool_call_id: output.tool_call_id, status: output.status, content: [{ type: 'text', text }] }, projection };
}
