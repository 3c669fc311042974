/**
 * Result `data` → `ui_hints`: a small, descriptive summary of a tool result for the actions that
 * have a stable UI (contract §4). Hints are internal — stored in the tool message's
 * `metadata.tool_agent_output.ui_hints` and compiled to `ui_schema` by `compileUiSchema`; they
 * never appear on the wire. They name a `template` and carry only the fields that template shows,
 * so a stored hint stays small and can be recompiled for history.
 *
 * Pure: no I/O, never throws.
 */
import { z } from 'zod';

/** Tool outcome status as on the wire (declared once, in src/protocol). */
export type { ToolStatus } from '../protocol/tool.js';
import type { ToolStatus } from '../protocol/tool.js';

// ---------------------------------------------------------------------------------------------
// Input shapes (contract §10). Parsing strips every field a template does not show.

const NullableText = z
  .string()
  .nullable()
  .optional()
  .transform((v) => v ?? null);

const EventData = z.object({
  id: z.string(),
  owner_id: z.string(),
  title: z.string(),
  start_at: z.string(),
  end_at: z.string(),
  location: NullableText,
  description: NullableText,
});

const Count = z.number().int().nonnegative();

const ErrorData = z.object({ code: z.string(), message: z.string() });

const BatchItemData = z.union([
  z.object({ index: Count, ok: z.literal(true), event: EventData }),
  z.object({ index: Count, ok: z.literal(false), error: ErrorData }),
]);

const InviteStatus = z.enum(['pending', 'accepted', 'rejected']);

const ContactData = z.object({ user_id: z.string(), name: NullableText, phone: NullableText });

const MemoryData = z.object({ key: z.string(), content: z.string(), updated_at: z.string() });

// ---------------------------------------------------------------------------------------------
// Hint shapes.

/** The fields of an `Event` a UI shows (timestamps of the record itself are left out). */
export type EventHint = z.output<typeof EventData>;

/** One item of a `calendar.create` batch: its event, or its structured error (code + message). */
export type BatchItemHint = z.output<typeof BatchItemData>;

export type InviteStatusValue = z.output<typeof InviteStatus>;

/** `calendar.read`: the events found. */
export interface EventListHints {
  template: 'event_list';
  count: number;
  events: EventHint[];
}

/** `calendar.create` (single) and `calendar.update`: the resulting event. */
export interface EventHints {
  template: 'event';
  change: 'created' | 'updated';
  event: EventHint;
}

/** `calendar.create` batch, final result: every item's outcome and the counts. */
export interface EventBatchHints {
  template: 'event_batch';
  created: number;
  failed: number;
  items: BatchItemHint[];
}

/** `calendar.create` batch, one item's outcome (the `data` of a non-final notification). */
export interface EventBatchItemHints {
  template: 'event_batch_item';
  item: BatchItemHint;
}

/** `calendar.delete`. */
export interface EventDeletedHints {
  template: 'event_deleted';
  event_id: string;
}

/** `calendar.share`: the invites sent. */
export interface EventSharedHints {
  template: 'event_shared';
  event_id: string;
  invites: { invite_id: string; user_id: string; status: InviteStatusValue }[];
}

/** `calendar.accept_invite` / `calendar.reject_invite`: the invite's new state. */
export interface InviteStatusHints {
  template: 'invite_status';
  invite: { invite_id: string; event_id: string; status: InviteStatusValue };
}

/** `contacts.read`: the people found. */
export interface ContactListHints {
  template: 'contact_list';
  count: number;
  contacts: { user_id: string; name: string | null; phone: string | null }[];
}

/** `memory.update`: the memory as stored. */
export interface MemorySavedHints {
  template: 'memory_saved';
  memory: { key: string; content: string; updated_at: string };
}

/** Descriptive UI hints, discriminated by `template`. JSON-native (no `undefined`, no classes). */
export type UiHints =
  | EventListHints
  | EventHints
  | EventBatchHints
  | EventBatchItemHints
  | EventDeletedHints
  | EventSharedHints
  | InviteStatusHints
  | ContactListHints
  | MemorySavedHints;

export type UiTemplate = UiHints['template'];

// ---------------------------------------------------------------------------------------------
// data → hints, one parser per action.

const EventListData = z.object({ items: z.array(EventData), count: Count });
const SingleEventData = z.object({ event: EventData });
const BatchData = z.object({ items: z.array(BatchItemData), created: Count, failed: Count });
const DeletedData = z.object({ event_id: z.string(), deleted: z.literal(true) });
const SharedData = z.object({
  event_id: z.string(),
  invites: z.array(z.object({ invite_id: z.string(), user_id: z.string(), status: InviteStatus })),
});
const InviteData = z.object({
  invite: z.object({ invite_id: z.string(), event_id: z.string(), status: InviteStatus }),
});
const ContactListData = z.object({ items: z.array(ContactData), count: Count });
const MemoryUpdateData = z.object({ memory: MemoryData });

type Deriver = (data: unknown) => UiHints | null;

function calendarCreate(data: unknown): UiHints | null {
  // One action, three shapes: a batch result carries `items`, a single result `event`, and a
  // batch's per-item notification carries that item's `{index, ok, …}`.
  if (isRecord(data) && 'items' in data) {
    const batch = BatchData.safeParse(data);
    if (!batch.success) return null;
    return { template: 'event_batch', created: batch.data.created, failed: batch.data.failed, items: batch.data.items };
  }
  if (isRecord(data) && 'event' in data && !('index' in data)) {
    const single = SingleEventData.safeParse(data);
    return single.success ? { template: 'event', change: 'created', event: single.data.event } : null;
  }
  const item = BatchItemData.safeParse(data);
  return item.success ? { template: 'event_batch_item', item: item.data } : null;
}

const DERIVERS: Readonly<Record<string, Deriver>> = {
  'calendar.read': (data) => {
    const r = EventListData.safeParse(data);
    return r.success ? { template: 'event_list', count: r.data.count, events: r.data.items } : null;
  },
  'calendar.create': calendarCreate,
  'calendar.update': (data) => {
    const r = SingleEventData.safeParse(data);
    return r.success ? { template: 'event', change: 'updated', event: r.data.event } : null;
  },
  'calendar.delete': (data) => {
    const r = DeletedData.safeParse(data);
    return r.success ? { template: 'event_deleted', event_id: r.data.event_id } : null;
  },
  'calendar.share': (data) => {
    const r = SharedData.safeParse(data);
    return r.success ? { template: 'event_shared', event_id: r.data.event_id, invites: r.data.invites } : null;
  },
  'calendar.accept_invite': invite,
  'calendar.reject_invite': invite,
  'contacts.read': (data) => {
    const r = ContactListData.safeParse(data);
    return r.success ? { template: 'contact_list', count: r.data.count, contacts: r.data.items } : null;
  },
  'memory.update': (data) => {
    const r = MemoryUpdateData.safeParse(data);
    return r.success ? { template: 'memory_saved', memory: r.data.memory } : null;
  },
};

function invite(data: unknown): UiHints | null {
  const r = InviteData.safeParse(data);
  return r.success ? { template: 'invite_status', invite: r.data.invite } : null;
}

/**
 * Derives the UI hints for one tool result.
 *
 * Returns `null` for an action without a stable UI (e.g. `memory.read`, `memory.forget`, anything
 * unknown), for `data` that does not have the action's documented shape, and for a `failure` —
 * except a `calendar.create` batch in which every item failed, whose per-item errors are shown.
 * Never throws. The result holds only plain JSON values, copied out of `data`.
 */
export function deriveUiHints(module: string, method: string, data: unknown, status: ToolStatus): UiHints | null {
  const key = `${module}.${method}`;
  const derive = Object.hasOwn(DERIVERS, key) ? DERIVERS[key] : undefined;
  const hints = derive ? derive(data) : null;
  if (status === 'failure' && hints?.template !== 'event_batch') return null;
  return hints;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
