/**
 * The post-processor's pure core: from the CLI's document to the complete
 * ToolAgentOutput the system stores, and from that to the text the model
 * reads and the notifications a host receives. No I/O here.
 */
import type { CliDocument, CliError } from '../cli-router/run-cli.js';

export const TOOL_NAME = 'project_cli';

export type ToolStatus = 'success' | 'failure' | 'partial';

export interface ToolCallArgs {
  module: string;
  method: string;
  input: Record<string, unknown>;
}

export interface ToolResult {
  module: string;
  method: string;
  data: unknown;
}

/** What the system keeps of a call: `metadata.tool_agent_output` of its tool message. */
export interface ToolAgentOutput {
  tool_name: typeof TOOL_NAME;
  tool_call_id: string;
  tool_call_args: ToolCallArgs;
  status: ToolStatus;
  result: ToolResult | null;
  error: CliError | null;
  /** Descriptive, internal: compiled to `ui_schema` on the way out, never sent. */
  ui_hints: unknown;
}

export type DeriveUiHints = (module: string, method: string, data: unknown, status: ToolStatus) => unknown;

interface BatchData {
  items: Array<{ index: number; ok: boolean }>;
  created: number;
  failed: number;
}

function isBatchData(data: unknown): data is BatchData {
  const d = data as Partial<BatchData> | null;
  return !!d && Array.isArray(d.items) && typeof d.created === 'number' && typeof d.failed === 'number';
}

export function isBatchCall(args: ToolCallArgs): boolean {
  return Array.isArray(args.input.items);
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
    ui_hints: deriveUiHints(args.module, args.method, result ? result.data : batchOutcomes(doc), status) ?? null,
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
  if (out.status === 'failure' || !out.result) return JSON.stringify({ status: 'failure', error: out.error });
  return JSON.stringify({ status: out.status, module: out.result.module, method: out.result.method, data: out.result.data });
}

export interface ToolResultNotification {
  thread_id: string;
  tool_call_id: string;
  tool_name: typeof TOOL_NAME;
  tool_call_args: ToolCallArgs;
  status: ToolStatus;
  result?: ToolResult;
  error?: CliError;
  ui_schema?: unknown;
  final: boolean;
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
    const items = (out.result?.data as BatchData | undefined)?.items ?? (out.error?.items as BatchData['items'] | undefined) ?? [];
    for (const item of items) {
      const n: ToolResultNotification = { ...base, status: 'partial', result: { module, method, data: item }, final: false };
      const ui = compileUi(deriveUiHints(module, method, item, 'partial'));
      if (ui) n.ui_schema = ui;
      list.push(n);
    }
  }
  const final: ToolResultNotification = { ...base, status: out.status, final: true };
  if (out.result) final.result = out.result;
  if (out.error) final.error = out.error;
  const ui = out.ui_hints ? compileUi(out.ui_hints) : undefined;
  if (ui) final.ui_schema = ui;
  list.push(final);
  return list;
}
