/**
 * The shapes of one `project_cli` call on the wire and in storage: what the
 * model writes, what `tool/invoke` answers, what `tool/result` carries and
 * what the tool message keeps (`metadata.tool_agent_output`).
 */
import { z } from 'zod';
import { named } from './registry.js';
import { DEPTH_MESSAGE, JsonObject, shallow } from './json.js';
import { UiSchema } from './ui-schema.js';
import { TOOL_NAME } from './limits.js';

/** The one tool the daemon offers (declared in limits.ts, which project-cli loads without schemas). */
export { TOOL_NAME };

export const ToolStatus = named('tool-call', 'ToolStatus', z.enum(['success', 'failure', 'partial']));

/**
 * Tool-level error codes. They cross the wire inside a `status: "failure"`
 * tool result (and the CLI's stdout document) — they are not JSON-RPC errors.
 */
export const TOOL_ERROR_CODES = [
  'INVALID_ACTION_INPUT',
  'UNKNOWN_ACTION',
  'ACTION_NOT_ALLOWED',
  'NOT_FOUND',
  'FORBIDDEN',
  'CONFLICT',
  'UNAUTHENTICATED',
  'TIMEOUT',
  'INTERNAL',
  'DUPLICATE_TOOL_CALL_ID',
  'CANCELLED',
  /** A quota of the session's profile or job is used up for now: `retry_after_ms` says when its window ends. */
  'RATE_LIMITED',
  'RESULT_TOO_LARGE',
  'APPROVAL_DENIED',
  'APPROVAL_EXPIRED',
] as const;
export const ToolErrorCode = named('tool-call', 'ToolErrorCode', z.enum(TOOL_ERROR_CODES));

/** What the model wrote: the only part of a call it controls, `{module, method, input}` and nothing else. */
export const ToolCallArgs = named(
  'tool-call',
  'ToolCallArgs',
  z.strictObject({
    module: z.string().min(1).max(100),
    method: z.string().min(1).max(100),
    input: JsonObject.refine(shallow, DEPTH_MESSAGE),
  }),
  'What the model wrote: the only part of a call it controls.',
);

/** The canonical, machine-oriented result of an action. */
export const ToolResult = named(
  'tool-call',
  'ToolResult',
  z.strictObject({ module: z.string(), method: z.string(), data: z.unknown() }),
  'The canonical, machine-oriented result of an action.',
);

/**
 * A structured tool-level failure. `module`/`method` are null only when the
 * CLI could not tell which action was meant. Codes may carry more fields
 * (`input_schema`, `issues`, `items`…).
 */
export const ToolError = named(
  'tool-call',
  'ToolError',
  z.looseObject({
    code: ToolErrorCode,
    message: z.string(),
    module: z.string().nullable(),
    method: z.string().nullable(),
  }),
  'A structured tool-level failure. Codes may carry more fields (input_schema, issues, items…).',
);

/** `RATE_LIMITED`'s fields beside the code (contract section 20): when the window ends, and which quota it was. */
export const RateLimitedError = named(
  'tool-call',
  'RateLimitedError',
  z.looseObject({
    code: z.literal('RATE_LIMITED'),
    message: z.string(),
    module: z.string(),
    method: z.string(),
    retry_after_ms: z.number().int().nonnegative(),
    quota: z.strictObject({ pattern: z.string(), period: z.enum(['minute', 'hour', 'day']), limit: z.number().int().positive() }),
  }),
  'A call past a quota: retry the same call after retry_after_ms, or tell the user (contract section 20).',
);
export type RateLimitedError = z.infer<typeof RateLimitedError>;

export const TextContent = named('tool-call', 'TextContent', z.strictObject({ type: z.literal('text'), text: z.string() }));

/** The result of `tool/invoke`: one text item holding the full JSON projection. */
export const ToolResponse = named(
  'tool-call',
  'ToolResponse',
  z.strictObject({
    tool_call_id: z.string(),
    status: ToolStatus,
    content: z.array(TextContent).length(1),
  }),
  'The result of tool/invoke: one text item holding the full JSON projection.',
);

/**
 * The JSON a call's text holds: `ToolResponse.content[0].text`, the `context` view's tool
 * message and MCP's `structuredContent` are this object (the text is `JSON.stringify` of it).
 */
export const ToolProjection = named(
  'tool-call',
  'ToolProjection',
  z.union([
    z.strictObject({
      status: z.enum(['success', 'partial']),
      module: z.string(),
      method: z.string(),
      data: z.unknown().describe('the action result: ids, outcome and counts for chained calls'),
    }),
    z.strictObject({ status: z.literal('failure'), error: ToolError }),
  ]),
  'The object whose JSON is the text of a call: {status, module, method, data} or {status: "failure", error}.',
);

/** params of a `tool/result` notification. */
export const ToolResultNotification = named(
  'tool-call',
  'ToolResultNotification',
  z.strictObject({
    thread_id: z.string(),
    tool_call_id: z.string(),
    tool_name: z.literal(TOOL_NAME),
    tool_call_args: ToolCallArgs,
    status: ToolStatus,
    result: ToolResult.optional(),
    error: ToolError.optional(),
    ui_schema: UiSchema.optional(),
    final: z.boolean(),
  }),
  'params of a tool/result notification: one non-final partial per batch item, then the final one.',
);

/** What the system keeps of a call. `ui_hints` are internal and never leave the daemon. */
export const ToolAgentOutput = named(
  'tool-call',
  'ToolAgentOutput',
  z.strictObject({
    tool_name: z.literal(TOOL_NAME),
    tool_call_id: z.string(),
    tool_call_args: ToolCallArgs,
    status: ToolStatus,
    result: ToolResult.nullable(),
    error: ToolError.nullable(),
    ui_hints: JsonObject.nullable(),
  }),
  'What the system keeps of a call: metadata.tool_agent_output of its tool message. ui_hints are internal and never leave the daemon.',
);

/**
 * The JSON Schema the tool descriptor (and MCP's `tools/list`) gives the model for
 * {@link ToolCallArgs}: deliberately thin — three required fields, no action matrix,
 * no limits the model would have to learn — with a description per field.
 */
export const TOOL_INPUT_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    module: { type: 'string', description: 'module name, e.g. calendar' },
    method: { type: 'string', description: 'method name, e.g. read' },
    input: { type: 'object', description: 'the action input', additionalProperties: true },
  },
  required: ['module', 'method', 'input'],
  additionalProperties: false,
};

/** The descriptor `initialize` returns: a thin input schema that does not list the action matrix. */
export const ToolDescriptor = named(
  'protocol',
  'ToolDescriptor',
  z.strictObject({ name: z.literal(TOOL_NAME), description: z.string(), input_schema: JsonObject }),
  'The one tool: its input_schema is a thin JSON Schema of {module, method, input}.',
);

export type ToolStatus = z.infer<typeof ToolStatus>;
export type ToolErrorCode = z.infer<typeof ToolErrorCode>;
export type ToolCallArgs = z.infer<typeof ToolCallArgs>;
export type ToolResult = z.infer<typeof ToolResult>;
export type ToolError = z.infer<typeof ToolError>;
export type ToolResponse = z.infer<typeof ToolResponse>;
export type ToolProjection = z.infer<typeof ToolProjection>;
export type ToolResultNotification = z.infer<typeof ToolResultNotification>;
export type ToolAgentOutput = z.infer<typeof ToolAgentOutput>;
export type ToolDescriptor = z.infer<typeof ToolDescriptor>;

/**
 * One thing wrong with an input, inside an `INVALID_ACTION_INPUT` error
 * (`error.issues`), as a model can act on it: where (`items[3].start_at`,
 * `(input)` for the object itself), what is wrong, and what would be accepted.
 * A TypeScript type only: `ToolError` keeps extra fields open on the wire.
 */
export interface InputIssue {
  path: string;
  message: string;
  /** What the field accepts, when zod says: a type, a format, a set of values. */
  expected?: string;
}
