/**
 * What each action returns as `data` (contract §10), on the wire in
 * snake_case. Inputs are declared with their handlers in the CLI router
 * (they carry refinements a JSON Schema cannot say); these are the outputs a
 * host chains calls on.
 */
import { z } from 'zod';
import { named } from './registry.js';

const a = <T extends z.ZodType>(id: string, schema: T, description?: string): T => named('actions', id, schema, description);

export { BATCH_MAX_ITEMS } from './limits.js';

/** Actions whose result has a stable UI: their `tool/result` and `ui` history carry a `ui_schema`. */
export const ACTIONS_WITH_UI = [
  'calendar.read',
  'calendar.create',
  'calendar.update',
  'calendar.delete',
  'calendar.share',
  'calendar.accept_invite',
  'calendar.reject_invite',
  'contacts.read',
  'memory.update',
] as const;

const Count = z.number().int().nonnegative();

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

export const CalendarReadData = a('CalendarReadData', z.strictObject({ items: z.array(Event), count: Count }));
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
export const MemoryReadData = a('MemoryReadData', z.strictObject({ items: z.array(Memory), count: Count }));

/** `module.method` → the shape of its `data` (its `$defs` id). */
export const ACTION_DATA = {
  'calendar.read': 'CalendarReadData',
  'calendar.create': 'CalendarEventData',
  'calendar.update': 'CalendarEventData',
  'calendar.delete': 'CalendarDeleteData',
  'calendar.share': 'CalendarShareData',
  'calendar.accept_invite': 'CalendarInviteData',
  'calendar.reject_invite': 'CalendarInviteData',
  'contacts.read': 'ContactsReadData',
  'memory.update': 'MemoryUpdateData',
  'memory.forget': 'MemoryForgetData',
  'memory.read': 'MemoryReadData',
} as const;

export type Event = z.infer<typeof Event>;
export type InviteStatus = z.infer<typeof InviteStatus>;
export type Contact = z.infer<typeof Contact>;
export type Memory = z.infer<typeof Memory>;
export type CalendarBatchItem = z.infer<typeof CalendarBatchItem>;
export type CalendarBatchData = z.infer<typeof CalendarBatchData>;
