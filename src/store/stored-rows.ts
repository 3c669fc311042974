/**
 * What the rows the wire is rebuilt from must hold — checked when they are
 * written and when a migration walks them, never on every read (history
 * reads them back as typed; see src/threads/history.ts).
 *
 * - A tool message's `metadata` is `{tool_agent_output}` (ToolAgentOutput),
 *   its `status` the output's own; a user or assistant message's is `{}` or
 *   `{worker_output}` (WorkerOutput).
 * - A call record's `args` is ToolCallArgs, its `outcome` the CLI document
 *   (CliDocument).
 *
 * At write time the daemon checks the object it has just built, once, before
 * serializing it (`toolMessageMetadata`): no text is parsed again. The shapes
 * are the protocol's zod schemas, so this module is loaded by the daemon only
 * — project-cli, whose start-up builds no wire schema, never imports it.
 */
import { z } from 'zod';
import { CliDocument } from '../protocol/cli-output.js';
import { WorkerOutput } from '../protocol/methods.js';
import { ToolAgentOutput, ToolCallArgs } from '../protocol/tool.js';
import type { StoredRowCheck } from './store.js';

/** `metadata` of a tool message. */
export const ToolMessageMetadata = z.strictObject({ tool_agent_output: ToolAgentOutput });
/** `metadata` of a user or assistant message. */
export const TextMessageMetadata = z.strictObject({ worker_output: WorkerOutput.optional() });

/** A row the protocol does not allow was about to be written. */
export class StoredRowError extends Error {
  override name = 'StoredRowError';
}

const issuesOf = (error: z.ZodError, prefix: string): string[] =>
  error.issues.slice(0, 3).map((i) => `${[prefix, ...i.path.map(String)].join('.')}: ${i.message}`);

/**
 * A tool message's metadata text. The output is checked against
 * ToolAgentOutput once, as the object just built (its parts came from
 * zod-validated params and the CLI document); a violation is a bug of ours,
 * and nothing is stored.
 */
export function toolMessageMetadata(output: ToolAgentOutput): string {
  const checked = ToolAgentOutput.safeParse(output);
  if (!checked.success) throw new StoredRowError(`refusing to store a tool message that is no ToolAgentOutput: ${issuesOf(checked.error, 'tool_agent_output').join('; ')}`);
  return JSON.stringify({ tool_agent_output: output });
}

function parsed(text: string, column: string): { value: unknown } | { problem: string } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return { problem: `${column}: not JSON` };
  }
}

/** Problems of one stored message ([] when it holds what the protocol says). */
function messageProblems(row: { role: string; metadata: string; tool_call_id: string | null; status: string | null }): string[] {
  const meta = parsed(row.metadata, 'metadata');
  if ('problem' in meta) return [meta.problem];
  if (row.role !== 'tool') {
    const checked = TextMessageMetadata.safeParse(meta.value);
    return checked.success ? [] : issuesOf(checked.error, 'metadata');
  }
  const checked = ToolMessageMetadata.safeParse(meta.value);
  if (!checked.success) return issuesOf(checked.error, 'metadata');
  const problems: string[] = [];
  if (row.tool_call_id === null) problems.push('tool_call_id: a tool message names its call');
  if (row.status !== checked.data.tool_agent_output.status) problems.push(`status: ${String(row.status)} is not the output's ${checked.data.tool_agent_output.status}`);
  return problems;
}

/** Problems of one call record. */
function toolCallProblems(row: { args: string; outcome: string }): string[] {
  const problems: string[] = [];
  const args = parsed(row.args, 'args');
  if ('problem' in args) problems.push(args.problem);
  else {
    const checked = ToolCallArgs.safeParse(args.value);
    if (!checked.success) problems.push(...issuesOf(checked.error, 'args'));
  }
  const outcome = parsed(row.outcome, 'outcome');
  if ('problem' in outcome) problems.push(outcome.problem);
  else {
    const checked = CliDocument.safeParse(outcome.value);
    if (!checked.success) problems.push(...issuesOf(checked.error, 'outcome'));
  }
  return problems;
}

/** The check an engine runs over every stored row when it migrates (`StoreOptions.checkRows`). */
export const STORED_ROW_CHECK: StoredRowCheck = { message: messageProblems, toolCall: toolCallProblems };
