/**
 * Numeric limits of the protocol, in a module of their own without schemas:
 * project-cli needs them, and importing actions.ts would build every
 * action's output schema at each subprocess start.
 */

/** Most items a `calendar.create` batch may hold; more is INVALID_ACTION_INPUT before anything runs. */
export const BATCH_MAX_ITEMS = 50;

/**
 * The longest delay a Node timer holds (2^31 − 1 ms, about 24.8 days). A longer
 * one is silently clamped to 1 ms by `setTimeout`, so every millisecond setting
 * is checked against it.
 */
export const MAX_TIMER_MS = 2_147_483_647;
