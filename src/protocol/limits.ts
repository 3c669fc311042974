/**
 * Constants of the protocol, in a module of their own without schemas:
 * project-cli and the transports need them, and importing the modules that
 * declare the wire shapes would build every schema at each subprocess start.
 */

/** The one tool the daemon offers. */
export const TOOL_NAME = 'project_cli';

/** Most items a `calendar.create` batch may hold; more is INVALID_ACTION_INPUT before anything runs. */
export const BATCH_MAX_ITEMS = 50;

/**
 * The longest delay a Node timer holds (2^31 − 1 ms, about 24.8 days). A longer
 * one is silently clamped to 1 ms by `setTimeout`, so every millisecond setting
 * is checked against it.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** A page of `memory.read` / `calendar.read` (`day`, `range`): `limit` defaults to this many items… */
export const PAGE_DEFAULT_LIMIT = 100;
/** …and may be at most this many. */
export const PAGE_MAX_LIMIT = 500;

/**
 * `limits.max_result_bytes` unless configured (1 MiB): a result whose
 * projection is larger is refused as `RESULT_TOO_LARGE`, never cut.
 */
export const DEFAULT_MAX_RESULT_BYTES = 1_048_576;

/** Longest bearer token accepted (session/open, MCP over HTTP, the AG-UI stream); longer is refused unread. */
export const MAX_BEARER_TOKEN_LENGTH = 16384;
