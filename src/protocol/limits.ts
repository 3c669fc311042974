/**
 * Numeric limits of the protocol, in a module of their own without schemas:
 * project-cli needs them, and importing actions.ts would build every
 * action's output schema at each subprocess start.
 */

/** Most items a `calendar.create` batch may hold; more is INVALID_ACTION_INPUT before anything runs. */
export const BATCH_MAX_ITEMS = 50;

/** The longest user bearer token accepted anywhere: `session/open`'s `auth.token`, an `Authorization` header. */
export const MAX_BEARER_TOKEN_CHARS = 16384;
