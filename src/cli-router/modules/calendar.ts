/**
 * The calendar's handlers. Their inputs, data shapes and descriptions are
 * the action table's (src/protocol/action-table.ts); each handler gets its
 * input as the table's schema parsed it.
 */
import { ActionError } from '../errors.js';
import { dayBounds } from '../time.js';
import type { ActionContext, ActionHandler, ActionHandlers } from '../action.js';
import type { Event, EventFields, InviteRow } from '../../store/store.js';
import type { CalendarBatchItem } from '../../protocol/actions.js';
import { calendarFields } from '../../protocol/action-fields.js';
import { describeIssues } from '../validation.js';
import { pageOf, positionOf } from '../cursor.js';
import { PAGE_DEFAULT_LIMIT } from '../../protocol/limits.js';

const notFound = (what: string) => new ActionError('NOT_FOUND', `${what} not found`);

const read: ActionHandler<'calendar.read'> = async (ctx, input) => {
  if (input.mode === 'event') {
    const event = await ctx.tx.events.getVisible(ctx.userId, input.event_id);
    if (!event) throw notFound('event');
    return { items: [event], count: 1, next_cursor: null };
  }
  const { startMs, endMs } = input.mode === 'day' ? dayBounds(input.date, input.timezone ?? 'UTC') : { startMs: Date.parse(input.start_at), endMs: Date.parse(input.end_at) };
  const limit = input.limit ?? PAGE_DEFAULT_LIMIT;
  const after = input.cursor === undefined ? null : positionOf(input.cursor, isEventPosition);
  // One more than the page: whether a next page exists, without counting.
  const rows = await ctx.tx.events.listVisible(ctx.userId, startMs, endMs, after && { startMs: after[0], id: after[1] }, limit + 1);
  const { items, next_cursor } = pageOf(rows, limit, (e) => [Date.parse(e.start_at), e.id]);
  return { items, count: items.length, next_cursor };
};

/** A page of events ends at its last event: its start (ms, as stored) and id. */
const isEventPosition = (p: unknown): p is [number, string] =>
  Array.isArray(p) && p.length === 2 && Number.isSafeInteger(p[0]) && typeof p[1] === 'string' && p[1].length > 0 && p[1].length <= 200;

const create: ActionHandler<'calendar.create'> = async (ctx, input) => {
  if (!('items' in input)) return { event: await ctx.tx.events.create(ctx.userId, input) };
  const items: CalendarBatchItem[] = [];
  for (const [index, raw] of input.items.entries()) {
    const parsed = calendarFields().EventInput.safeParse(raw);
    if (!parsed.success) {
      items.push({ index, ok: false, error: { code: 'INVALID_ACTION_INPUT', message: `invalid item ${index}`, issues: describeIssues(parsed.error, ['items', index]) } });
      continue;
    }
    // Each item is written on its own (a savepoint inside the call's transaction).
    const event = await ctx.tx.savepoint((tx) => tx.events.create(ctx.userId, parsed.data));
    items.push({ index, ok: true, event });
  }
  const created = items.filter((i) => i.ok).length;
  const data = { items, created, failed: items.length - created };
  if (created === 0) {
    throw new ActionError('INVALID_ACTION_INPUT', `all ${items.length} items failed`, data);
  }
  return data;
};

const update: ActionHandler<'calendar.update'> = async (ctx, input) => {
  const existing = await ownedOrThrow(ctx, input.event_id);
  const next: EventFields = {
    title: input.title ?? existing.title,
    start_at: input.start_at ?? existing.start_at,
    end_at: input.end_at ?? existing.end_at,
    location: input.location === undefined ? existing.location : input.location,
    description: input.description === undefined ? existing.description : input.description,
  };
  if (Date.parse(next.end_at) <= Date.parse(next.start_at)) {
    throw new ActionError('INVALID_ACTION_INPUT', 'end_at must be after start_at');
  }
  return { event: (await ctx.tx.events.updateOwned(ctx.userId, input.event_id, next, existing))! };
};

/**
 * Owner-only actions: an event the user cannot see at all is NOT_FOUND; one
 * they see through an accepted invite but do not own is FORBIDDEN.
 */
async function ownedOrThrow(ctx: ActionContext, eventId: string): Promise<Event> {
  // One read answers all three (an owned event is visible): one round trip on PostgreSQL.
  const visible = await ctx.tx.events.getVisible(ctx.userId, eventId);
  if (!visible) throw notFound('event');
  if (visible.owner_id !== ctx.userId) throw new ActionError('FORBIDDEN', 'only the owner may change this event');
  return visible;
}

const remove: ActionHandler<'calendar.delete'> = async (ctx, input) => {
  const existing = await ownedOrThrow(ctx, input.event_id);
  await ctx.tx.events.deleteOwned(ctx.userId, input.event_id, existing);
  return { event_id: input.event_id, deleted: true as const };
};

const share: ActionHandler<'calendar.share'> = async (ctx, input) => {
  await ownedOrThrow(ctx, input.event_id);
  const userIds = [...new Set(input.user_ids)];
  if (userIds.includes(ctx.userId)) throw new ActionError('INVALID_ACTION_INPUT', 'cannot invite yourself');
  const unknown: string[] = [];
  for (const id of userIds) if (!(await ctx.tx.users.exists(id))) unknown.push(id);
  if (unknown.length > 0) throw new ActionError('NOT_FOUND', 'user not found', { user_ids: unknown });
  // Invites are pending by definition; someone who already accepted is not asked again.
  const invites: Array<{ invite_id: string; user_id: string; status: 'pending' }> = [];
  const alreadyAccepted: string[] = [];
  for (const id of userIds) {
    const inv = await ctx.tx.invites.upsert(input.event_id, ctx.userId, id);
    if (inv.status === 'pending') invites.push({ invite_id: inv.invite_id, user_id: inv.invitee_id, status: 'pending' });
    else alreadyAccepted.push(id);
  }
  return alreadyAccepted.length > 0
    ? { event_id: input.event_id, invites, already_accepted: alreadyAccepted }
    : { event_id: input.event_id, invites };
};

function answerInvite(status: 'accepted' | 'rejected'): ActionHandler<'calendar.accept_invite' | 'calendar.reject_invite'> {
  return async (ctx, input) => {
    const invite = await ctx.tx.invites.getFor(ctx.userId, input.invite_id);
    if (!invite) throw notFound('invite');
    if (invite.status !== 'pending' && invite.status !== status) {
      throw new ActionError('CONFLICT', `invite already ${invite.status}`, { status: invite.status });
    }
    const updated = (await ctx.tx.invites.setStatus(ctx.userId, input.invite_id, status, invite)) as InviteRow;
    return { invite: { invite_id: updated.invite_id, event_id: updated.event_id, status: updated.status } };
  };
}

export const calendarHandlers = {
  'calendar.read': read,
  'calendar.create': create,
  'calendar.update': update,
  'calendar.delete': remove,
  'calendar.share': share,
  'calendar.accept_invite': answerInvite('accepted'),
  'calendar.reject_invite': answerInvite('rejected'),
} satisfies Partial<ActionHandlers>;
