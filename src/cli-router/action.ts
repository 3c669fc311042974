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
  readonly input: S;
  /** The schema shown to the model in `error.input_schema`; defaults to `input`. */
  readonly describedBy?: z.ZodType | undefined;
  run(ctx: ActionContext, input: z.output<S>): Promise<unknown>;
}

/**
 * What a module declares: its schemas as functions (each wrapped in `once`:
 * it is called on every read of `input` / `describedBy`), built on first read. A
 * project-cli process runs one action, and building zod schemas is most of
 * what evaluating a module costs (bench/RESULTS.md, start-up): so it builds
 * only those of the action it runs.
 */
export interface ActionDeclaration<S extends z.ZodType> {
  module: string;
  method: string;
  summary: string;
  input: () => S;
  describedBy?: () => z.ZodType;
  run(ctx: ActionContext, input: z.output<S>): Promise<unknown>;
}

export function defineAction<S extends z.ZodType>(decl: ActionDeclaration<S>): ActionDefinition {
  const { input, describedBy, ...def } = decl;
  return {
    ...def,
    get input() {
      return input();
    },
    get describedBy() {
      return describedBy?.();
    },
  } as unknown as ActionDefinition;
}

/** A value built on first call and kept: a module's schemas, shared by its actions. */
export function once<T>(build: () => T): () => T {
  let value: T | undefined;
  let done = false;
  return () => {
    if (!done) {
      value = build();
      done = true;
    }
    return value as T;
  };
}
