/**
 * Every request's params as a zod schema, declared once; handlers receive
 * parsed, typed params. Unknown keys are rejected (except in `initialize`)
 * so that a typo is an error, not a silently ignored field.
 */
import { z } from 'zod';

const Id = z.string().min(1).max(200);

/** Deeper JSON than any action needs would only make recursion (hashing, storage) fail later. */
export const MAX_JSON_DEPTH = 32;

/** Nesting depth of a JSON value, counted without recursion and given up past `limit`. */
export function jsonDepthExceeds(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

const DEPTH_MESSAGE = { message: `nested deeper than ${MAX_JSON_DEPTH} levels` };
const shallow = (v: unknown) => !jsonDepthExceeds(v, MAX_JSON_DEPTH);

/** Lenient on purpose: a newer host may send more fields to an older daemon. */
export const InitializeParams = z.object({
  protocol_version: z.literal('1'),
  client_info: z.object({ name: z.string().max(200), version: z.string().max(100) }).partial().optional(),
  service_key: z.string().max(1000).optional(),
  capabilities: z.record(z.string(), z.unknown()).optional(),
});

export const SessionOpenParams = z.strictObject({
  auth: z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('bearer'), token: z.string().min(1).max(16384) }),
    z.strictObject({ type: z.literal('automation'), job_id: Id }),
  ]),
  agent: z.string().min(1).max(100).optional(),
  enabled_skills: z.array(z.string().min(1).max(100)).max(100).optional(),
});

/** Exactly what the model wrote: `{module, method, input}` and nothing else. */
export const ToolArgs = z.strictObject({
  module: z.string().min(1).max(100),
  method: z.string().min(1).max(100),
  input: z.record(z.string(), z.unknown()).refine(shallow, DEPTH_MESSAGE),
});

export const ToolInvokeParams = z.strictObject({
  session_id: Id,
  thread_id: Id,
  tool_call_id: Id,
  args: ToolArgs,
});

export const WorkerOutput = z
  .strictObject({
    status: z.enum(['success', 'failure', 'partial']),
    answer: z.string(),
    suggested_actions: z.array(z.union([z.string(), z.record(z.string(), z.unknown())])).optional(),
    error: z.union([z.string(), z.record(z.string(), z.unknown())]).nullable().optional(),
  })
  .refine(shallow, DEPTH_MESSAGE);

export const MessageAppendParams = z.strictObject({
  session_id: Id,
  thread_id: Id,
  role: z.enum(['user', 'assistant']),
  content: z.string().max(1_000_000),
  worker_output: WorkerOutput.optional(),
});

export const HistoryGetParams = z.strictObject({
  session_id: Id,
  thread_id: Id,
  view: z.enum(['ui', 'context']).optional(),
  before: z.string().min(1).max(200).optional(),
  limit: z.number().int().min(1).max(500).optional(),
});

export const ThreadListParams = z.strictObject({
  session_id: Id,
  limit: z.number().int().min(1).max(500).optional(),
});

export const SkillsListParams = z.strictObject({ session_id: Id });

export const SkillsReadParams = z.strictObject({
  session_id: Id,
  name: z.string().min(1).max(100),
  path: z.string().min(1).max(500).optional(),
});

/** LSP's shutdown takes no params; whatever a client sends along is ignored. */
export const ShutdownParams = z.unknown();

export const ThreadSubscribeParams = z.strictObject({ session_id: Id, thread_id: Id });
