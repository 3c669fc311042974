/**
 * Tool-level error codes (contract section 3) and the project-cli exit code
 * each maps to (contract section 6). These cross the wire inside a
 * `status: "failure"` tool result — they are not JSON-RPC errors.
 */
import type { ToolErrorCode } from '../protocol/tool.js';

// The codes and the error's shape are wire shapes, declared once in src/protocol. Types only:
// a value re-exported from protocol/tool.js would make project-cli build every wire schema at
// start-up (~5 ms per subprocess call); the codes' list is exported from there (src/index.ts).
export type { ToolErrorCode, ToolError } from '../protocol/tool.js';

export const EXIT_OK = 0;

const EXIT_CODE_BY_ERROR: Record<ToolErrorCode, number> = {
  INVALID_ACTION_INPUT: 2,
  UNKNOWN_ACTION: 2,
  UNAUTHENTICATED: 3,
  ACTION_NOT_ALLOWED: 4,
  FORBIDDEN: 4,
  NOT_FOUND: 5,
  CONFLICT: 6,
  DUPLICATE_TOOL_CALL_ID: 6,
  RESULT_TOO_LARGE: 1,
  TIMEOUT: 1,
  INTERNAL: 1,
  CANCELLED: 1,
  // Answered by the daemon before anything runs; project-cli never prints it.
  RATE_LIMITED: 1,
  // Decided by a person in the daemon, never by project-cli (contract section 17): "not permitted".
  APPROVAL_DENIED: 4,
  APPROVAL_EXPIRED: 4,
};

export function exitCodeFor(code: ToolErrorCode): number {
  return EXIT_CODE_BY_ERROR[code];
}

/**
 * Thrown by handlers for expected failures (not found, conflict…). Anything
 * else a handler throws is a bug and becomes INTERNAL with a generic message.
 */
export class ActionError extends Error {
  constructor(
    readonly code: ToolErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ActionError';
  }
}
