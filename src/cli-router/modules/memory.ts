/** The memory's handlers; their inputs and data shapes are the action table's (src/protocol/action-table.ts). */
import { ActionError } from '../errors.js';
import type { ActionHandler, ActionHandlers } from '../action.js';

const update: ActionHandler<'memory.update'> = async (ctx, input) => ({ memory: await ctx.tx.memories.upsert(ctx.userId, input.key, input.content) });

const forget: ActionHandler<'memory.forget'> = async (ctx, input) => {
  if (!(await ctx.tx.memories.forget(ctx.userId, input.key))) throw new ActionError('NOT_FOUND', 'memory not found');
  return { key: input.key, forgotten: true as const };
};

const read: ActionHandler<'memory.read'> = async (ctx, input) => {
  const items = await ctx.tx.memories.read(ctx.userId, input.key);
  return { items, count: items.length };
};

export const memoryHandlers = { 'memory.update': update, 'memory.forget': forget, 'memory.read': read } satisfies Partial<ActionHandlers>;
