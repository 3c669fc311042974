/** The memory's handlers; their inputs and data shapes are the action table's (src/protocol/action-table.ts). */
import { ActionError } from '../errors.js';
import type { ActionHandler, ActionHandlers } from '../action.js';
import { pageOf, positionOf } from '../cursor.js';
import { PAGE_DEFAULT_LIMIT } from '../../protocol/limits.js';

const update: ActionHandler<'memory.update'> = async (ctx, input) => ({ memory: await ctx.tx.memories.upsert(ctx.userId, input.key, input.content) });

const forget: ActionHandler<'memory.forget'> = async (ctx, input) => {
  if (!(await ctx.tx.memories.forget(ctx.userId, input.key))) throw new ActionError('NOT_FOUND', 'memory not found');
  return { key: input.key, forgotten: true as const };
};

const read: ActionHandler<'memory.read'> = async (ctx, input) => {
  if (input.key !== undefined) {
    const items = await ctx.tx.memories.read(ctx.userId, input.key);
    return { items, count: items.length, next_cursor: null };
  }
  const limit = input.limit ?? PAGE_DEFAULT_LIMIT;
  const after = input.cursor === undefined ? null : positionOf(input.cursor, isKeyPosition)[0];
  // One more than the page: whether a next page exists, without counting.
  const { items, next_cursor } = pageOf(await ctx.tx.memories.page(ctx.userId, after, limit + 1), limit, (m) => [m.key]);
  return { items, count: items.length, next_cursor };
};

const isKeyPosition = (p: unknown): p is [string] => Array.isArray(p) && p.length === 1 && typeof p[0] === 'string' && p[0].length > 0 && p[0].length <= 200;

export const memoryHandlers = { 'memory.update': update, 'memory.forget': forget, 'memory.read': read } satisfies Partial<ActionHandlers>;
