import { z } from 'zod';
import { defineAction, once, type ActionContext } from '../action.js';
import type { Contact } from '../../store/store.js';

/** Built on first use (`once`): only a process that runs contacts.read builds it. */
const ReadInput = once(() =>
  z.strictObject({
    query: z.string().min(1).max(200).optional(),
    phone: z.string().regex(/^\+?[0-9][0-9 ()-]{2,30}$/, 'a phone number').optional(),
    limit: z.number().int().min(1).max(200).optional(),
  }),
);

/**
 * Without `phone`: the people the user knows. With `phone`: exactly the one
 * registered user holding that number (how you find someone to invite), or
 * an empty list — never a fuzzy search over all users.
 */
async function read(ctx: ActionContext, input: z.output<ReturnType<typeof ReadInput>>) {
  let items: Contact[];
  if (input.phone !== undefined) {
    const user = await ctx.tx.users.findByPhone(input.phone);
    items = user && user.id !== ctx.userId ? [{ user_id: user.id, name: user.name, phone: user.phone }] : [];
  } else {
    items = await ctx.tx.contacts.list(ctx.userId, input.query, input.limit ?? 50);
  }
  return { items, count: items.length };
}

export const contactsActions = [defineAction({ module: 'contacts', method: 'read', summary: 'find people you know, or the registered user with exactly a phone number', input: ReadInput, run: read })];
