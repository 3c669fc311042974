/** The contacts' handler; its input and data shape are the action table's (src/protocol/action-table.ts). */
import type { ActionHandler, ActionHandlers } from '../action.js';
import type { Contact } from '../../protocol/actions.js';

/**
 * Without `phone`: the people the user knows. With `phone`: exactly the one
 * registered user holding that number (how you find someone to invite), or
 * an empty list — never a fuzzy search over all users.
 */
const read: ActionHandler<'contacts.read'> = async (ctx, input) => {
  let items: Contact[];
  if (input.phone !== undefined) {
    const user = await ctx.tx.users.findByPhone(input.phone);
    items = user && user.id !== ctx.userId ? [{ user_id: user.id, name: user.name, phone: user.phone }] : [];
  } else {
    items = await ctx.tx.contacts.list(ctx.userId, input.query, input.limit ?? 50);
  }
  return { items, count: items.length };
};

export const contactsHandlers = { 'contacts.read': read } satisfies Partial<ActionHandlers>;
