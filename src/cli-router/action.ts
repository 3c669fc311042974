import type { z } from 'zod';
import type { Tx } from '../store/store.js';

/** What a handler may use: the call's unit of work, scoped by the credential's user. */
export interface ActionContext {
  tx: Tx;
  userId: string;
  jobId: string | null;
}

/**
 * One whitelisted `module.method`: a zod input schema and a handler. The
 * handler runs inside the call's transaction (awaiting only `ctx.tx`, per the
 * store boundary's rules) and returns JSON-native `data`.
 */
export interface ActionDefinition<S extends z.ZodType = z.ZodType> {
  module: string;
  method: string;
  /** One line for `project-cli --help`: what the action does. */
  summary: string;
  /** Parses the input; on failure the caller answers INVALID_ACTION_INPUT. */
  input: S;
  /** The schema shown to the model in `error.input_schema`; defaults to `input`. */
  describedBy?: z.ZodType;
  run(ctx: ActionContext, input: z.output<S>): Promise<unknown>;
}

export function defineAction<S extends z.ZodType>(def: ActionDefinition<S>): ActionDefinition {
  return def as unknown as ActionDefinition;
}
