/**
 * Constants of the protocol, in a module of their own without schemas:
 * project-cli and the transports need them, and importing the modules that
 * declare the wire shapes would build every schema at each subprocess start.
 */

/** The one tool the daemon offers. */
export const TOOL_NAME = 'project_cli';

/** Most items a `calendar.create` batch may hold; more is INVALID_ACTION_INPUT before anything runs. */
export const BATCH_MAX_ITEMS = 50;

/** Longest bearer token accepted (session/open, MCP over HTTP, the AG-UI stream); longer is refused unread. */
export const MAX_BEARER_TOKEN_LENGTH = 16384;
