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

/** Longest bearer token accepted (session/open, MCP over HTTP, the AG-UI stream); longer is refused unread. */
export const MAX_BEARER_TOKEN_LENGTH = 16384;
