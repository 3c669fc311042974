/**
 * Result `data` → `ui_hints`: a small, descriptive summary of a tool result for the actions that
 * have a stable UI (contract §4). Hints are internal — stored in the tool message's
 * `metadata.tool_agent_output.ui_hints` and compiled to `ui_schema` by `compileUiSchema`; they
 * never appear on the wire. They name a `template` and carry only the fields that template shows,
 * so a stored hint stays small and can be recompiled for history.
 *
 * Pure: no I/O, never throws.
 */
import { actionSpec, type UiDeriverRef } from '../protocol/action-table.js';
import {
  CalendarBatchData,
  CalendarBatchItem,
  CalendarDeleteData,
  CalendarEventData,
  CalendarInviteData,
  CalendarReadData,
  CalendarShareData,
  ContactsReadData,
  MemoryUpdateData,
  type Contact,
  type InviteStatus,
  type Event,
  type Memory,
} from '../protocol/actions.js';

/** Tool outcome status as on the wire (declared once, in src/protocol). */
export type { ToolStatus } from '../protocol/tool.js';
import type { ToolStatus } from '../protocol/tool.js';

// ---------------------------------------------------------------------------------------------
// Hint shapes. The data they come from is parsed by the protocol's own schemas (src/protocol/actions.ts);
// a hint keeps only the fields its template shows.

/** The fields of an `Event` a UI shows (timestamps of the record itself are left out). */
export type EventHint = Omit<Event, 'created_at' | 'updated_at'>;

/** One item of a `calendar.create` batch: its event, or its structured error (code + message). */
export type BatchItemHint =
  | { index: number; ok: true; event: EventHint }
  | { index: number; ok: false; error: Pick<NonNullable<CalendarBatchItem['error']>, 'code' | 'message'> };

export type InviteStatusValue = InviteStatus;

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
  invites: CalendarShareData['invites'];
}

/** `calendar.accept_invite` / `calendar.reject_invite`: the invite's new state. */
export interface InviteStatusHints {
  template: 'invite_status';
  invite: CalendarInviteData['invite'];
}

/** `contacts.read`: the people found. */
export interface ContactListHints {
  template: 'contact_list';
  count: number;
  contacts: Contact[];
}

/** `memory.update`: the memory as stored. */
export interface MemorySavedHints {
  template: 'memory_saved';
  memory: Memory;
}

/**
 * A call awaiting approval (contract section 17): what approving it would
 * change, as it stands now — the event about to be deleted or shared, the
 * memory about to be forgotten — and the call's input, field by field.
 */
export interface ApprovalHints {
  template: 'approval';
  /** `module.method`. */
  action: string;
  event: EventHint | null;
  memory: Memory | null;
  /** `calendar.share`: who would be invited. */
  user_ids: string[] | null;
  /** The input's top-level fields as text (JSON for anything but a string). */
  input: Array<{ name: string; value: string }>;
  expires_at: string;
}

/** Descriptive UI hints, discriminated by `template`. JSON-native (no `undefined`, no classes). */
export type UiHints =
  | ApprovalHints
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
// data → hints: the derivers the action table names (its `ui` field), each parsing with the protocol's shape.

type Deriver = (data: unknown) => UiHints | null;

export function eventHint(e: Event): EventHint {
  return { id: e.id, owner_id: e.owner_id, title: e.title, start_at: e.start_at, end_at: e.end_at, location: e.location, description: e.description };
}

/** An item's outcome, or null when `ok` and what it carries disagree. */
function batchItemHint(item: CalendarBatchItem): BatchItemHint | null {
  if (item.ok) return item.event ? { index: item.index, ok: true, event: eventHint(item.event) } : null;
  return item.error ? { index: item.index, ok: false, error: { code: item.error.code, message: item.error.message } } : null;
}

function eventCreated(data: unknown): UiHints | null {
  // One action, three shapes: a batch result carries `items`, a single result `event`, and a
  // batch's per-item notification carries that item's `{index, ok, …}`.
  if (isRecord(data) && 'items' in data) {
    const batch = CalendarBatchData.safeParse(data);
    if (!batch.success) return null;
    const items = batch.data.items.map(batchItemHint);
    if (items.some((i) => i === null)) return null;
    return { template: 'event_batch', created: batch.data.created, failed: batch.data.failed, items: items as BatchItemHint[] };
  }
  if (isRecord(data) && 'event' in data && !('index' in data)) {
    const single = CalendarEventData.safeParse(data);
    return single.success ? { template: 'event', change: 'created', event: eventHint(single.data.event) } : null;
  }
  const parsed = CalendarBatchItem.safeParse(data);
  const item = parsed.success ? batchItemHint(parsed.data) : null;
  return item ? { template: 'event_batch_item', item } : null;
}

const DERIVERS: Readonly<Record<UiDeriverRef, Deriver>> = {
  event_list: (data) => {
    const r = CalendarReadData.safeParse(data);
    return r.success ? { template: 'event_list', count: r.data.count, events: r.data.items.map(eventHint) } : null;
  },
  event_created: eventCreated,
  event_updated: (data) => {
    const r = CalendarEventData.safeParse(data);
    return r.success ? { template: 'event', change: 'updated', event: eventHint(r.data.event) } : null;
  },
  event_deleted: (data) => {
    const r = CalendarDeleteData.safeParse(data);
    return r.success ? { template: 'event_deleted', event_id: r.data.event_id } : null;
  },
  event_shared: (data) => {
    const r = CalendarShareData.safeParse(data);
    return r.success ? { template: 'event_shared', event_id: r.data.event_id, invites: r.data.invites } : null;
  },
  invite_status: (data) => {
    const r = CalendarInviteData.safeParse(data);
    return r.success ? { template: 'invite_status', invite: r.data.invite } : null;
  },
  contact_list: (data) => {
    const r = ContactsReadData.safeParse(data);
    return r.success ? { template: 'contact_list', count: r.data.count, contacts: r.data.items } : null;
  },
  memory_saved: (data) => {
    const r = MemoryUpdateData.safeParse(data);
    return r.success ? { template: 'memory_saved', memory: r.data.memory } : null;
  },
};

/**
 * Derives the UI hints for one tool result.
 *
 * Returns `null` for an action without a stable UI (e.g. `memory.read`, `memory.forget`, anything
 * unknown), for `data` that does not have the action's documented shape, and for a `failure` —
 * except a `calendar.create` batch in which every item failed, whose per-item errors are shown.
 * Never throws. The result holds only plain JSON values, copied out of `data`.
 */
export function deriveUiHints(module: string, method: string, data: unknown, status: ToolStatus): UiHints | null {
  const ref = actionSpec(`${module}.${method}`)?.ui;
  const hints = ref ? DERIVERS[ref](data) : null;
  if (status === 'failure' && hints?.template !== 'event_batch') return null;
  return hints;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
