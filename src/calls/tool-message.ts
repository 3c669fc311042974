/**
 * A call's tool message, built once from the CLI's document: the complete
 * ToolAgentOutput the system keeps, the projection (the object the model
 * reads) and its text. The live path (tool-invoke.ts, both executors) and
 * recovery at start (recovery.ts) build it here, so a recovered call stores
 * exactly what the live one would have. The text is serialized once and is
 * then the response's text, the stored content and what the MCP tool sends.
 */
import type { CliDocument } from '../cli-router/core.js';
import { buildToolAgentOutput, projectionOf, projectionTextOf, type ToolAgentOutput, type ToolCallArgs } from '../codec/tool-output.js';
import { deriveUiHints } from '../codec/ui-hints.js';
import type { ToolProjection } from '../protocol/tool.js';
import type { MessageRow, Tx } from '../store/store.js';
import { toolMessageMetadata } from '../store/stored-rows.js';

export interface ToolMessage {
  output: ToolAgentOutput;
  /** What `tool/invoke` answers and MCP's `structuredContent` is. */
  projection: ToolProjection;
  /** `JSON.stringify(projection)`: the response's text and the stored content. */
  text: string;
}

/**
 * `docText`: the document's own JSON text when the caller has it (the
 * core's `render`); a success's projection text is then made from it rather
 * than serialized again — only for a document of exactly `{ok, module,
 * method, data}`, in that order, which is what its text then holds.
 */
export function toolMessageOf(doc: CliDocument, args: ToolCallArgs, toolCallId: string, docText?: string): ToolMessage {
  return messageOfOutput(buildToolAgentOutput(doc, args, toolCallId, deriveUiHints), docText !== undefined && isPlainSuccess(doc) ? docText : undefined);
}

function isPlainSuccess(doc: CliDocument): boolean {
  if (!doc.ok) return false;
  const keys = Object.keys(doc);
  return keys.length === 4 && keys[0] === 'ok' && keys[1] === 'module' && keys[2] === 'method' && keys[3] === 'data';
}

/** A call's document and the tool message built from it, checked against ToolAgentOutput: ready to store. */
export interface CheckedToolMessage {
  doc: CliDocument;
  message: ToolMessage;
  metadataJson: string;
}

/**
 * The in-process executor's record check (`CoreCall.checkRecord`): the
 * document becomes its tool message, checked once (toolMessageMetadata
 * throws StoredRowError), before the record or the message is written.
 */
export function checkedToolMessage(doc: CliDocument, args: ToolCallArgs, toolCallId: string, docText?: string): CheckedToolMessage {
  const message = toolMessageOf(doc, args, toolCallId, docText);
  return { doc, message, metadataJson: toolMessageMetadata(message.output) };
}

/** `docText`: the text of the success document `output` was built from (toolMessageOf), else undefined. */
export function messageOfOutput(output: ToolAgentOutput, docText?: string): ToolMessage {
  const projection = projectionOf(output);
  return { output, projection, text: projectionTextOf(projection, docText) ?? JSON.stringify(projection) };
}

/** Where a tool message is stored: the call's key. */
export interface CallKey {
  userId: string;
  threadId: string;
  toolCallId: string;
}

/**
 * Stores the tool message. Its metadata is checked (ToolAgentOutput) and
 * serialized here, once — unless the caller did both already
 * (`metadataJson`, the in-process executor's check before its record).
 * It is its unit's last write (`last`: every caller returns right after).
 */
export function insertToolMessage(tx: Tx, key: CallKey, message: ToolMessage, metadataJson = toolMessageMetadata(message.output)): Promise<MessageRow> {
  return tx.messages.insert({
    userId: key.userId,
    threadId: key.threadId,
    role: 'tool',
    content: message.text,
    metadataJson,
    toolCallId: key.toolCallId,
    status: message.output.status,
  }, { last: true });
}
