import { z } from 'zod';
import { ActionError, type ToolError } from '../errors.js';
import { dayBounds, timeSchemas } from '../time.js';
import { defineAction, once, type ActionContext } from '../action.js';
import type { Event, EventFields, InviteRow } from '../../store/store.js';
import { describeIssues } from '../validation.js';
import { BATCH_MAX_ITEMS as MAX_BATCH_ITEMS } from '../../protocol/limits.js';

/**
 * The module's schemas, each built on first use (`once`): a project-cli
 * process builds only those of the one action it runs. `fields` holds the
 * pieces the actions' inputs share.
 */
const fields = once(() => {
  const { CalendarDate, Instant, TimeZone } = timeSchemas();
  const Id = z.string().min(1).max(200);
  const Title = z.string().min(1).max(500).refine((t) => t.trim().length > 0, 'title must not be blank');
  const OptionalText = z.string().max(5000).nullable().optional();

  /** Only judged when both instants parsed: a bad instant reports itself, not a bogus order. */
  const endAfterStart = (v: { start_at?: string | undefined; end_at?: string | undefined }) => {
    const instant = (s: string | undefined) => (s !== undefined && Instant.safeParse(s).success ? Date.parse(s) : NaN);
    const start = instant(v.start_at);
    const end = instant(v.end_at);
    return Number.isNaN(start) || Number.isNaN(end) || end > start;
  };
  const END_AFTER_START = { message: 'end_at must be after start_at', path: ['end_at'] };

  const EventInput = z
    .strictObject({ title: Title, start_at: Instant, end_at: Instant, location: OptionalText, description: OptionalText })
    .refine(endAfterStart, END_AFTER_START);
  return { CalendarDate, Instant, TimeZone, Id, Title, OptionalText, endAfterStart, END_AFTER_START, EventInput };
});

/** A single event, or a batch whose items are checked one by one. */
type CreateParsed = { items: unknown[] } | z.output<ReturnType<typeof fields>['EventInput']>;

const ReadInput = once(() => {
  const { CalendarDate, Instant, TimeZone, Id, endAfterStart, END_AFTER_START } = fields();
  return z.discriminatedUnion('mode', [
    z.strictObject({ mode: z.literal('day'), date: CalendarDate, timezone: TimeZone.optional() }),
    z.strictObject({ mode: z.literal('range'), start_at: Instant, end_at: Instant }).refine(endAfterStart, END_AFTER_START),
    z.strictObject({ mode: z.literal('event'), event_id: Id }),
  ]);
});

/**
 * One event or a batch, told apart by shape: an object with `items` is a
 * batch. Only the chosen branch's issues are reported, so a missing `title`
 * is named `title` rather than lost in a union's "Invalid input".
 */
const CreateInput = once(() => {
  const { EventInput } = fields();
  /** Items are validated one by one so that a bad item fails alone. */
  const BatchInput = z.strictObject({ items: z.array(z.unknown()).min(1).max(MAX_BATCH_ITEMS) });
  return z.unknown().transform((value, ctx): CreateParsed => {
    const isBatch = typeof value === 'object' && value !== null && !Array.isArray(value) && 'items' in value;
    const parsed = (isBatch ? BatchInput : EventInput).safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, input: value } as Parameters<typeof ctx.addIssue>[0]);
    return z.NEVER;
  });
});
/** What `error.input_schema` shows for calendar.create: built only when a call needs it. */
const CreateDescribed = once(() => {
  const { EventInput } = fields();
  return z.union([EventInput, z.strictObject({ items: z.array(EventInput).min(1).max(MAX_BATCH_ITEMS) })]);
});

const UpdateInput = once(() => {
  const { Instant, Id, Title, OptionalText, endAfterStart, END_AFTER_START } = fields();
  return z
    .strictObject({
      event_id: Id,
      title: Title.optional(),
      start_at: Instant.optional(),
      end_at: Instant.optional(),
      location: OptionalText,
      description: OptionalText,
    })
    .refine(endAfterStart, END_AFTER_START);
});
const DeleteInput = once(() => z.strictObject({ event_id: fields().Id }));
const ShareInput = once(() => z.strictObject({ event_id: fields().Id, user_ids: z.array(fields().Id).min(1).max(100) }));
const InviteInput = once(() => z.strictObject({ invite_id: fields().Id }));

const notFound = (what: string) => new ActionError('NOT_FOUND', `${what} not found`);

async function read(ctx: ActionContext, input: z.output<ReturnType<typeof ReadInput>>) {
  let items: Event[];
  if (input.mode === 'event') {
    const event = await ctx.tx.events.getVisible(ctx.userId, input.event_id);
    if (!event) throw notFound('event');
    items = [event];
  } else if (input.mode === 'day') {
    const { startMs, endMs } = dayBounds(input.date, input.timezone ?? 'UTC');
    items = await ctx.tx.events.listVisible(ctx.userId, startMs, endMs);
  } else {
    items = await ctx.tx.events.listVisible(ctx.userId, Date.parse(input.start_at), Date.parse(input.end_at));
  }
  return { items, count: items.length };
}

interface BatchItemOutcome {
  index: number;
  ok: boolean;
  event?: Event;
  error?: Pick<ToolError, 'code' | 'message'> & Record<string, unknown>;
}

async function create(ctx: ActionContext, input: CreateParsed) {
  if (!('items' in input)) return { event: await ctx.tx.events.create(ctx.userId, input) };
  const items: BatchItemOutcome[] = [];
  for (const [index, raw] of input.items.entries()) {
    const parsed = fields().EventInput.safeParse(raw);
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
}

async function update(ctx: ActionContext, input: z.output<ReturnType<typeof UpdateInput>>) {
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
  return { event: (await ctx.tx.events.updateOwned(ctx.userId, input.event_id, next))! };
}

/**
 * Owner-only actions: an event the user cannot see at all is NOT_FOUND; one
 * they see through an accepted invite but do not own is FORBIDDEN.
 */
async function ownedOrThrow(ctx: ActionContext, eventId: string): Promise<Event> {
  const owned = await ctx.tx.events.getOwned(ctx.userId, eventId);
  if (owned) return owned;
  if (await ctx.tx.events.getVisible(ctx.userId, eventId)) throw new ActionError('FORBIDDEN', 'only the owner may change this event');
  throw notFound('event');
}

async function remove(ctx: ActionContext, input: { event_id: string }) {
  await ownedOrThrow(ctx, input.event_id);
  await ctx.tx.events.deleteOwned(ctx.userId, input.event_id);
  return { event_id: input.event_id, deleted: true as const };
}

async function share(ctx: ActionContext, input: { event_id: string; user_ids: string[] }) {
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
}

function answerInvite(status: 'accepted' | 'rejected') {
  return async (ctx: ActionContext, input: { invite_id: string }) => {
    const invite = await ctx.tx.invites.getFor(ctx.userId, input.invite_id);
    if (!invite) throw notFound('invite');
    if (invite.status !== 'pending' && invite.status !== status) {
      throw new ActionError('CONFLICT', `invite already ${invite.status}`, { status: invite.status });
    }
    const updated = (await ctx.tx.invites.setStatus(ctx.userId, input.invite_id, status)) as InviteRow;
    return { invite: { invite_id: updated.invite_id, event_id: updated.event_id, status: updated.status } };
  };
}

export const calendarActions = [
  defineAction({ module: 'calendar', method: 'read', summary: 'list your visible events of a day or a range, or get one event', input: ReadInput, run: read }),
  defineAction({
    module: 'calendar',
    method: 'create', summary: 'create one event, or a batch of up to 50 ({items: [...]})',
    input: CreateInput, describedBy: CreateDescribed,
    run: create,
  }),
  defineAction({ module: 'calendar', method: 'update', summary: 'change fields of an event you own', input: UpdateInput, run: update }),
  defineAction({ module: 'calendar', method: 'delete', summary: 'delete an event you own', input: DeleteInput, run: remove }),
  defineAction({ module: 'calendar', method: 'share', summary: 'invite users to an event you own', input: ShareInput, run: share }),
  defineAction({ module: 'calendar', method: 'accept_invite', summary: 'accept an invite addressed to you', input: InviteInput, run: answerInvite('accepted') }),
  defineAction({ module: 'calendar', method: 'reject_invite', summary: 'reject an invite addressed to you', input: InviteInput, run: answerInvite('rejected') }),
];
