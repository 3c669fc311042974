/**
 * MCP Tasks on the wire (contract section 18), each shape declared once:
 * the params the `tasks/*` handlers parse (the SDK validates them before a
 * handler runs) and the results they answer, in the two revisions' words.
 *
 * - 2025-11-25 (core, experimental): `tools/call` with `params.task` answers
 *   `{task}`; `tasks/get` a Task (`ttl`, `pollInterval`); `tasks/result` the
 *   CallToolResult; `tasks/list` a page of Tasks; `tasks/cancel` the Task.
 * - 2026-07-28 (extension `io.modelcontextprotocol/tasks`): `tools/call` of a
 *   client that declared the extension answers `resultType: "task"` and the
 *   Task itself (`ttlMs`, `pollIntervalMs`); `tasks/get` the Task with its
 *   `result` inline once completed; `tasks/update` and `tasks/cancel` an
 *   empty acknowledgement.
 */
import { z } from 'zod';

/** The extension's identifier (2026-07-28), in `capabilities.extensions`. */
export const TASKS_EXTENSION_ID = 'io.modelcontextprotocol/tasks';

/** What a host may hand its model while a task runs (2025-11-25, `_meta` of the CreateTaskResult). */
export const MODEL_IMMEDIATE_RESPONSE_META_KEY = 'io.modelcontextprotocol/model-immediate-response';

/** Params `_meta` as MCP allows it on every request. */
const Meta = z.record(z.string(), z.unknown()).optional();

/**
 * The `task` param of a 2025-11-25 `tools/call` (TaskMetadata): `ttl`, if
 * given, a duration in milliseconds — a non-negative integer — or null.
 * The SDK never sees it (the task is taken off before the call runs), so it
 * is checked here.
 */
export const TaskMetadata2025 = z.looseObject({ ttl: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable().optional() });

export const TaskIdParams = z.looseObject({ taskId: z.string().min(1).max(2000), _meta: Meta });
export type TaskIdParams = z.infer<typeof TaskIdParams>;

export const ListTasksParams = z.looseObject({ cursor: z.string().max(2000).optional(), _meta: Meta });
export type ListTasksParams = z.infer<typeof ListTasksParams>;

export const UpdateTaskParams = z.looseObject({
  taskId: z.string().min(1).max(2000),
  // The SDK lifts a request's `inputResponses` out of its params before validation (ctx.mcpReq.inputResponses).
  inputResponses: z.record(z.string(), z.unknown()).optional(),
  _meta: Meta,
});
export type UpdateTaskParams = z.infer<typeof UpdateTaskParams>;

export const TaskStatus = z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']);
export type TaskStatus = z.infer<typeof TaskStatus>;

/** A task as 2025-11-25 reports it (`tasks/get`, `tasks/cancel`, `tasks/list` items, inside `{task}`). */
export const Task2025 = z.strictObject({
  taskId: z.string(),
  status: TaskStatus,
  statusMessage: z.string().optional(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  /** null: unlimited — the call stays in history. */
  ttl: z.number().int().nullable(),
  pollInterval: z.number().int().optional(),
});
export type Task2025 = z.infer<typeof Task2025>;

export const ListTasksResult2025 = z.looseObject({ tasks: z.array(Task2025), nextCursor: z.string().optional() });
export type ListTasksResult2025 = z.infer<typeof ListTasksResult2025>;

/** A task as the 2026-07-28 extension reports it: `result` once completed (the CallToolResult). */
export const Task2026 = z.looseObject({
  taskId: z.string(),
  status: TaskStatus,
  statusMessage: z.string().optional(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttlMs: z.number().int().nullable(),
  pollIntervalMs: z.number().int().optional(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.record(z.string(), z.unknown()).optional(),
  inputRequests: z.record(z.string(), z.unknown()).optional(),
});
export type Task2026 = z.infer<typeof Task2026>;

/** `tasks/update` and `tasks/cancel` on 2026-07-28: an empty acknowledgement. */
export const TaskAck = z.looseObject({});

/**
 * The part of a 2026-07-28 request's `_meta` envelope that says whether the
 * client declared the Tasks extension on this very request.
 */
export const ClientCapabilitiesEnvelope = z.looseObject({
  'io.modelcontextprotocol/clientCapabilities': z.looseObject({ extensions: z.record(z.string(), z.unknown()).optional() }).optional(),
});
