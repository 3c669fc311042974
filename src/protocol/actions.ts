/**
 * What each action returns as `data` (contract §10), on the wire in
 * snake_case: the outputs a host chains calls on, each a `$defs` entry of
 * schemas/actions.json. Which action returns which is the action table's
 * (action-table.ts), as are the inputs (they carry refinements a JSON Schema
 * cannot say).
 */
import { z } from 'zod';
import { named } from './registry.js';
import { ACTIONS, ACTION_NAMES, type ActionDataId, type ActionName } from './action-table.js';

const a = <T extends z.ZodType>(id: string, schema: T, description?: string): T => named('actions', id, schema, description);

export { BATCH_MAX_ITEMS } from './limits.js';

const Count = z.number().int().nonnegative();
/** Where the next page starts (pass it back as `cursor`); null on the last page. */
const NextCursor = z.string().nullable();

export const Event = a(
  'Event',
  z.strictObject({
    id: z.string(),
    owner_id: z.string(),
    title: z.string(),
    start_at: z.string(),
    end_at: z.string(),
    location: z.string().nullable(),
    description: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
  'A calendar event; ids are strings and end_at is after start_at.',
);

export const InviteStatus = a('InviteStatus', z.enum(['pending', 'accepted', 'rejected']));
export const Contact = a('Contact', z.strictObject({ user_id: z.string(), name: z.string().nullable(), phone: z.string().nullable() }));
export const Memory = a('Memory', z.strictObject({ key: z.string(), content: z.string(), updated_at: z.string() }));

export const CalendarReadData = a(
  'CalendarReadData',
  z.strictObject({ items: z.array(Event), count: Count, next_cursor: NextCursor }),
  'One page: count is the number of items on it; next_cursor (null on the last page) asks for the next one.',
);
export const CalendarEventData = a('CalendarEventData', z.strictObject({ event: Event }), 'calendar.create (one event) and calendar.update.');
export const CalendarBatchItem = a(
  'CalendarBatchItem',
  z.strictObject({
    index: Count,
    ok: z.boolean(),
    event: Event.optional(),
    error: z.looseObject({ code: z.string(), message: z.string() }).optional(),
  }),
);
export const CalendarBatchData = a(
  'CalendarBatchData',
  z.strictObject({ items: z.array(CalendarBatchItem), created: Count, failed: Count }),
  'calendar.create with input.items: one outcome per item, in order.',
);
export const CalendarDeleteData = a('CalendarDeleteData', z.strictObject({ event_id: z.string(), deleted: z.literal(true) }));
export const CalendarShareData = a(
  'CalendarShareData',
  z.strictObject({
    event_id: z.string(),
    invites: z.array(z.strictObject({ invite_id: z.string(), user_id: z.string(), status: z.literal('pending') })),
    already_accepted: z.array(z.string()).optional(),
  }),
);
export const CalendarInviteData = a(
  'CalendarInviteData',
  z.strictObject({ invite: z.strictObject({ invite_id: z.string(), event_id: z.string(), status: InviteStatus }) }),
  'calendar.accept_invite and calendar.reject_invite.',
);
export const ContactsReadData = a('ContactsReadData', z.strictObject({ items: z.array(Contact), count: Count }));
export const MemoryUpdateData = a('MemoryUpdateData', z.strictObject({ memory: Memory }));
export const MemoryForgetData = a('MemoryForgetData', z.strictObject({ key: z.string(), forgotten: z.literal(true) }));
export const MemoryReadData = a(
  'MemoryReadData',
  z.strictObject({ items: z.array(Memory), count: Count, next_cursor: NextCursor }),
  'One page: count is the number of items on it; next_cursor (null on the last page) asks for the next one.',
);

/** The zod schema of each data shape the action table names (a missing one fails to compile). */
export const ACTION_DATA_SHAPES: Readonly<Record<ActionDataId, z.ZodType>> = {
  CalendarReadData,
  CalendarEventData,
  CalendarBatchData,
  CalendarDeleteData,
  CalendarShareData,
  CalendarInviteData,
  ContactsReadData,
  MemoryUpdateData,
  MemoryForgetData,
  MemoryReadData,
};

/** `module.method` → the shape of its `data` (its `$defs` id), from the action table. */
export const ACTION_DATA = Object.fromEntries(ACTION_NAMES.map((name) => [name, ACTIONS[name].data])) as {
  readonly [K in ActionName]: (typeof ACTIONS)[K]['data'];
};

export type Event = z.infer<typeof Event>;
export type InviteStatus = z.infer<typeof InviteStatus>;
export type Contact = z.infer<typeof Contact>;
export type Memory = z.infer<typeof Memory>;
export type CalendarBatchItem = z.infer<typeof CalendarBatchItem>;
export type CalendarBatchData = z.infer<typeof CalendarBatchData>;
export type CalendarReadData = z.infer<typeof CalendarReadData>;
export type CalendarEventData = z.infer<typeof CalendarEventData>;
export type CalendarDeleteData = z.infer<typeof CalendarDeleteData>;
export type CalendarShareData = z.infer<typeof CalendarShareData>;
export type CalendarInviteData = z.infer<typeof CalendarInviteData>;
export type ContactsReadData = z.infer<typeof ContactsReadData>;
export type MemoryUpdateData = z.infer<typeof MemoryUpdateData>;
export type MemoryForgetData = z.infer<typeof MemoryForgetData>;
export type MemoryReadData = z.infer<typeof MemoryReadData>;
