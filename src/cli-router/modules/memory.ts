import { z } from 'zod';
import { ActionError } from '../errors.js';
import { defineAction, once, type ActionContext } from '../action.js';

/** Built on first use (`once`): a project-cli process builds only the schema of the action it runs. */
const Key = once(() => z.string().trim().min(1).max(200));
const UpdateInput = once(() => z.strictObject({ key: Key(), content: z.string().min(1).max(20000) }));

async function forget(ctx: ActionContext, input: { key: string }) {
  if (!(await ctx.tx.memories.forget(ctx.userId, input.key))) throw new ActionError('NOT_FOUND', 'memory not found');
  return { key: input.key, forgotten: true as const };
}

async function read(ctx: ActionContext, input: { key?: string | undefined }) {
  const items = await ctx.tx.memories.read(ctx.userId, input.key);
  return { items, count: items.length };
}

export const memoryActions = [
  defineAction({
    module: 'memory',
    method: 'update', summary: 'save or replace a memory under a key',
    input: UpdateInput,
    run: async (ctx, input) => ({ memory: await ctx.tx.memories.upsert(ctx.userId, input.key, input.content) }),
  }),
  defineAction({ module: 'memory', method: 'forget', summary: 'delete the memory under a key', input: once(() => z.strictObject({ key: Key() })), run: forget }),
  defineAction({ module: 'memory', method: 'read', summary: 'list your memories, or the one under a key', input: once(() => z.strictObject({ key: Key().optional() })), run: read }),
];
