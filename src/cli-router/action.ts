import type { z } from 'zod';
import type { Tx } from '../store/store.js';
import type { ActionData, ActionInput, ActionName } from '../protocol/action-table.js';

/** What a handler may use: the call's unit of work, scoped by the credential's user. */
export interface ActionContext {
  tx: Tx;
  userId: string;
  jobId: string | null;
}

/**
 * The handler of one action of the table (src/protocol/action-table.ts): it
 * runs inside the call's transaction (awaiting only `ctx.tx`, per the store
 * boundary's rules), gets the input as the table's schema parsed it and
 * returns the `data` the table names.
 */
export type ActionHandler<K extends ActionName> = (ctx: ActionContext, input: ActionInput<K>) => Promise<ActionData<K>>;

/** One handler per action of the table; a module's file declares those of its actions. */
export type ActionHandlers = { readonly [K in ActionName]: ActionHandler<K> };

/**
 * One whitelisted `module.method` as the router runs it: the table's entry
 * joined with its handler. `input` and `describedBy` are built on first read.
 */
export interface ActionDefinition<S extends z.ZodType = z.ZodType> {
  module: string;
  method: string;
  /** One line for `project-cli --help`: what the action does. */
  summary: string;
  /** Parses the input; on failure the caller answers INVALID_ACTION_INPUT. */
  readonly input: S;
  /** The schema shown to the model in `error.input_schema`; defaults to `input`. */
  readonly describedBy?: z.ZodType | undefined;
  run(ctx: ActionContext, input: z.output<S>): Promise<unknown>;
}
