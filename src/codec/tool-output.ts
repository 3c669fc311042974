/**
 * The post-processor's pure core: from the CLI's document to the complete
 * ToolAgentOutput the system stores, and from that to the text the model
 * reads and the notifications a host receives. No I/O here.
 */
import type { CliDocument } from '../protocol/cli-output.js';
import { TOOL_NAME } from '../protocol/limits.js';
import { isBatchCall } from '../protocol/action-table.js';
import type { CalendarBatchData } from '../protocol/actions.js';

export { TOOL_NAME, isBatchCall };

// The wire shapes are declared once, in src/protocol (schemas/tool-call.json is generated from it).
export type {
  ToolAgentOutput,
  ToolCallArgs,
  ToolError,
  ToolResponse,
  ToolResult,
  ToolResultNotification,
  ToolStatus,
} from '../protocol/tool.js';
import type { ToolAgentOutput, ToolCallArgs, ToolError, ToolProjection, ToolResultNotification, ToolStatus } from '../protocol/tool.js';
import type { UiSchema } from '../protocol/ui-schema.js';

type JsonObject = { [k: string]: unknown };

export type DeriveUiHints = (module: string, method: string, data: unknown, status: ToolStatus) => unknown;

/** A batch's result as far as the status needs it (the shape itself is the protocol's). */
function isBatchData(data: unknown): data is CalendarBatchData {
  const d = data as Partial<CalendarBatchData> | null;
  return !!d && Array.isArray(d.items) && typeof d.created === 'number' && typeof d.failed === 'number';
}

/**
 * Status of a finished call: a batch is `success` when every item went
 * through, `partial` when some did, `failure` when none did.
 */
export function statusOf(doc: CliDocument, args: ToolCallArgs): ToolStatus {
  if (!doc.ok) return 'failure';
  if (isBatchCall(args) && isBatchData(doc.data) && doc.data.failed > 0) return 'partial';
  return 'success';
}

export function buildToolAgentOutput(
  doc: CliDocument,
  args: ToolCallArgs,
  toolCallId: string,
  deriveUiHints: DeriveUiHints,
): ToolAgentOutput {
  const status = statusOf(doc, args);
  const result = doc.ok ? { module: doc.module, method: doc.method, data: doc.data } : null;
  return {
    tool_name: TOOL_NAME,
    tool_call_id: toolCallId,
    tool_call_args: args,
    status,
    result,
    error: doc.ok ? null : doc.error,
    // Hints and UI schemas are plain JSON objects; the generated types describe them only as objects.
    ui_hints: (deriveUiHints(args.module, args.method, result ? result.data : batchOutcomes(doc), status) ?? null) as JsonObject | null,
  };
}

/** A batch in which every item failed still reports each item (in its error). */
function batchOutcomes(doc: CliDocument): unknown {
  if (doc.ok) return null;
  const { items, created, failed } = doc.error;
  return Array.isArray(items) ? { items, created, failed } : null;
}

/**
 * The text the model reads: the full JSON, nothing summarised or cut, and
 * deterministic for the same outcome.
 */
export function projectText(out: ToolAgentOutput): string {
  return JSON.stringify(projectionOf(out));
}

/** How every success document's text begins (src/cli-router/core.ts `render`: `{ok, module, method, data}`, in that order). */
const SUCCESS_DOC_PREFIX = '{"ok":true,';

/**
 * `JSON.stringify(projection)` of a success, made from the text of the
 * document it was built from (`docText`, the CLI's `render` of
 * `{ok: true, module, method, data}` with exactly those keys in that
 * order): the same bytes with `"ok":true` replaced by the status, so the
 * result's data is serialized once for both. Undefined when the text is no
 * such document's (the caller serializes the projection itself).
 */
export function projectionTextOf(projection: ToolProjection, docText: string | undefined): string | undefined {
  if (docText === undefined || projection.status === 'failure' || !docText.startsWith(`${SUCCESS_DOC_PREFIX}"module":`)) return undefined;
  return `{"status":"${projection.status}",${docText.slice(SUCCESS_DOC_PREFIX.length)}`;
}

/** The object `projectText` is the JSON of (MCP's `structuredContent`): built once, never parsed back from the text. */
export function projectionOf(out: ToolAgentOutput): ToolProjection {
  if (out.status === 'failure' || !out.result) return { status: 'failure', error: out.error as ToolError };
  return { status: out.status, module: out.result.module, method: out.result.method, data: out.result.data };
}

/**
 * The `tool/result` notifications of a call, in order: one non-final
 * `partial` per batch item, then the final one. A pure function of the
 * stored output, so a replayed call streams exactly what the live one did.
 */
export function notificationsFor(
  threadId: string,
  out: ToolAgentOutput,
  compileUi: (hints: unknown) => unknown,
  deriveUiHints: DeriveUiHints,
): ToolResultNotification[] {
  const base = { thread_id: threadId, tool_call_id: out.tool_call_id, tool_name: TOOL_NAME, tool_call_args: out.tool_call_args } as const;
  const list: ToolResultNotification[] = [];
  if (isBatchCall(out.tool_call_args)) {
    const { module, method } = out.tool_call_args;
    const items = (out.result?.data as CalendarBatchData | undefined)?.items ?? (out.error?.items as CalendarBatchData['items'] | undefined) ?? [];
    for (const item of items) {
      const n: ToolResultNotification = { ...base, status: 'partial', result: { module, method, data: item }, final: false };
      const ui = compileUi(deriveUiHints(module, method, item, 'partial'));
      if (ui) n.ui_schema = ui as UiSchema;
      list.push(n);
    }
  }
  const final: ToolResultNotification = { ...base, status: out.status, final: true };
  if (out.result) final.result = out.result;
  if (out.error) final.error = out.error;
  const ui = out.ui_hints ? compileUi(out.ui_hints) : undefined;
  if (ui) final.ui_schema = ui as UiSchema;
  list.push(final);
  return list;
}
