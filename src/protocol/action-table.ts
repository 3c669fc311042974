/**
 * The action table: every `module.method` that exists, declared once. Each
 * entry holds what the rest of the code base derives from it —
 *
 * - `description`: the line `project-cli --help` prints;
 * - `input` (and `describedBy`, the schema `error.input_schema` shows when
 *   it differs): the zod input, built on first use (`once`, so a project-cli
 *   process builds only the schemas of the one action it runs);
 * - `data` (and `batch.data`): the `$defs` id of what the action returns,
 *   declared in actions.ts (`ACTION_DATA`, the conformance runner, handler
 *   types);
 * - `annotations`: the MCP hints of the action (the MCP tool's hints are
 *   derived from those of the session's actions);
 * - `batch`: how to tell a batch call from its input (`isBatchCall`);
 * - `ui`: which ui_hints deriver of src/codec/ui-hints.ts its results go
 *   through (`null`: no stable UI), named here as a pure reference;
 * - `example`: the input the inspector's call form suggests.
 *
 * The CLI router pairs each entry with its handler (src/cli-router/registry.ts,
 * which fails to compile when one is missing). Adding an action is one entry
 * here, its handler in its module's file and its skill text.
 *
 * Cheap to import: no schema is built at load (no `named()` shape either), so
 * project-cli, the inspector's bundler and the daemon all read the same table.
 */
import { z } from 'zod';
import { Id } from './json.js';
import { BATCH_MAX_ITEMS } from './limits.js';
import { once } from './once.js';
import { calendarFields, memoryKey, pageFields, type CalendarEventInput } from './action-fields.js';
import type * as DataShapes from './actions.js';

/** The MCP tool annotations one action justifies (MCP `ToolAnnotations`). */
export interface ActionAnnotations {
  /** Changes nothing. */
  readOnlyHint: boolean;
  /** Deletes or overwrites what the user had. */
  destructiveHint: boolean;
  /** Calling it again with the same input has no further effect. */
  idempotentHint: boolean;
}

/** The `$defs` ids of schemas/actions.json an action's `data` may have. */
export type ActionDataId =
  | 'CalendarReadData'
  | 'CalendarEventData'
  | 'CalendarBatchData'
  | 'CalendarDeleteData'
  | 'CalendarShareData'
  | 'CalendarInviteData'
  | 'ContactsReadData'
  | 'MemoryUpdateData'
  | 'MemoryForgetData'
  | 'MemoryReadData';

/** The ui_hints derivers of src/codec/ui-hints.ts, by name. */
export type UiDeriverRef =
  | 'event_list'
  | 'event_created'
  | 'event_updated'
  | 'event_deleted'
  | 'event_shared'
  | 'invite_status'
  | 'contact_list'
  | 'memory_saved';

export interface ActionSpec {
  readonly description: string;
  readonly input: () => z.ZodType;
  readonly describedBy?: () => z.ZodType;
  readonly data: ActionDataId;
  readonly annotations: ActionAnnotations;
  /** Present for an action with a batch form: `when` tells a batch input, `data` is a batch's result. */
  readonly batch?: { readonly when: (input: Readonly<Record<string, unknown>>) => boolean; readonly data: ActionDataId };
  readonly ui: UiDeriverRef | null;
  readonly example: Readonly<Record<string, unknown>>;
}

const READ: ActionAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };

// ------------------------------------------------------------------ inputs

const CalendarReadInput = once(() => {
  const { CalendarDate, Instant, TimeZone, endAfterStart, END_AFTER_START } = calendarFields();
  const { limit, cursor } = pageFields();
  return z.discriminatedUnion('mode', [
    z.strictObject({ mode: z.literal('day'), date: CalendarDate, timezone: TimeZone.optional(), limit, cursor }),
    z.strictObject({ mode: z.literal('range'), start_at: Instant, end_at: Instant, limit, cursor }).refine(endAfterStart, END_AFTER_START),
    z.strictObject({ mode: z.literal('event'), event_id: Id }),
  ]);
});

/** A `calendar.create` input as parsed: one event, or a batch whose items the handler checks one by one. */
export type CalendarCreateParsed = { items: unknown[] } | CalendarEventInput;

/**
 * One event or a batch, told apart by shape: an object with `items` is a
 * batch. Only the chosen branch's issues are reported, so a missing `title`
 * is named `title` rather than lost in a union's "Invalid input".
 */
const CalendarCreateInput = once(() => {
  const { EventInput, BatchInput } = calendarFields();
  return z.unknown().transform((value, ctx): CalendarCreateParsed => {
    const parsed = (isBatchInput(value) ? BatchInput : EventInput).safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, input: value } as Parameters<typeof ctx.addIssue>[0]);
    return z.NEVER;
  });
});
/** What `error.input_schema` shows for calendar.create: built only when a call needs it. */
const CalendarCreateDescribed = once(() => {
  const { EventInput } = calendarFields();
  return z.union([EventInput, z.strictObject({ items: z.array(EventInput).min(1).max(BATCH_MAX_ITEMS) })]);
});

function isBatchInput(value: unknown): value is { items: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'items' in value;
}

const CalendarUpdateInput = once(() => {
  const { Instant, Title, OptionalText, endAfterStart, END_AFTER_START } = calendarFields();
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

const EventIdInput = once(() => z.strictObject({ event_id: Id }));
const InviteIdInput = once(() => z.strictObject({ invite_id: Id }));

// ------------------------------------------------------------------ the table

export const ACTIONS = {
  'calendar.read': {
    description: 'list your visible events of a day or a range (a page at a time), or get one event',
    input: CalendarReadInput,
    data: 'CalendarReadData',
    annotations: READ,
    ui: 'event_list',
    example: { mode: 'day', date: '2026-04-21' },
  },
  'calendar.create': {
    description: `create one event, or a batch of up to ${BATCH_MAX_ITEMS} ({items: [...]})`,
    input: CalendarCreateInput,
    describedBy: CalendarCreateDescribed,
    data: 'CalendarEventData',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    batch: { when: (input) => Array.isArray(input['items']), data: 'CalendarBatchData' },
    ui: 'event_created',
    example: { title: 'Design review', start_at: '2026-04-21T10:00:00+08:00', end_at: '2026-04-21T11:00:00+08:00' },
  },
  'calendar.update': {
    description: 'change fields of an event you own',
    input: CalendarUpdateInput,
    data: 'CalendarEventData',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    ui: 'event_updated',
    example: { event_id: 'evt_…', title: 'New title' },
  },
  'calendar.delete': {
    description: 'delete an event you own',
    input: EventIdInput,
    data: 'CalendarDeleteData',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    ui: 'event_deleted',
    example: { event_id: 'evt_…' },
  },
  'calendar.share': {
    description: 'invite users to an event you own',
    input: once(() => z.strictObject({ event_id: Id, user_ids: z.array(Id).min(1).max(100) })),
    data: 'CalendarShareData',
    // Re-inviting returns the invite already sent; a rejected one goes back to pending.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    ui: 'event_shared',
    example: { event_id: 'evt_…', user_ids: ['user_…'] },
  },
  'calendar.accept_invite': {
    description: 'accept an invite addressed to you',
    input: InviteIdInput,
    data: 'CalendarInviteData',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    ui: 'invite_status',
    example: { invite_id: 'inv_…' },
  },
  'calendar.reject_invite': {
    description: 'reject an invite addressed to you',
    input: InviteIdInput,
    data: 'CalendarInviteData',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    ui: 'invite_status',
    example: { invite_id: 'inv_…' },
  },
  'contacts.read': {
    description: 'find people you know, or the registered user with exactly a phone number',
    input: once(() =>
      z.strictObject({
        query: z.string().min(1).max(200).optional(),
        phone: z.string().regex(/^\+?[0-9][0-9 ()-]{2,30}$/, 'a phone number').optional(),
        limit: z.number().int().min(1).max(200).optional(),
      }),
    ),
    data: 'ContactsReadData',
    annotations: READ,
    ui: 'contact_list',
    example: { query: 'Bob' },
  },
  'memory.update': {
    description: 'save or replace a memory under a key',
    input: once(() => z.strictObject({ key: memoryKey(), content: z.string().min(1).max(20000) })),
    data: 'MemoryUpdateData',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    ui: 'memory_saved',
    example: { key: 'standup', content: 'Daily standup is at 09:30.' },
  },
  'memory.forget': {
    description: 'delete the memory under a key',
    input: once(() => z.strictObject({ key: memoryKey() })),
    data: 'MemoryForgetData',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    ui: null,
    example: { key: 'standup' },
  },
  'memory.read': {
    description: 'list your memories (a page at a time), or the one under a key',
    input: once(() => z.strictObject({ key: memoryKey().optional(), ...pageFields() })),
    data: 'MemoryReadData',
    annotations: READ,
    ui: null,
    example: {},
  },
} as const satisfies Record<string, ActionSpec>;

// ------------------------------------------------------------------ derived

/** `module.method` of an action that exists. */
export type ActionName = keyof typeof ACTIONS;

/** Every action, sorted. */
export const ACTION_NAMES: readonly ActionName[] = (Object.keys(ACTIONS) as ActionName[]).sort();

/** The table entry of `name`, or undefined for an action that does not exist (never an inherited key). */
export function actionSpec(name: string): ActionSpec | undefined {
  return Object.hasOwn(ACTIONS, name) ? (ACTIONS as Record<string, ActionSpec>)[name] : undefined;
}

/** Actions whose result has a stable UI: their `tool/result` and `ui` history carry a `ui_schema`. */
export const ACTIONS_WITH_UI: readonly ActionName[] = ACTION_NAMES.filter((name) => ACTIONS[name].ui !== null);

/** Whether a call uses its action's batch form (only `calendar.create` has one: `input.items`). */
export function isBatchCall(args: { module: string; method: string; input: Readonly<Record<string, unknown>> }): boolean {
  const batch = actionSpec(`${args.module}.${args.method}`)?.batch;
  return batch !== undefined && batch.when(args.input);
}

/** The example input the inspector suggests for each action. */
export const ACTION_EXAMPLES: Readonly<Record<ActionName, Readonly<Record<string, unknown>>>> = Object.fromEntries(
  ACTION_NAMES.map((name) => [name, ACTIONS[name].example]),
) as Record<ActionName, Readonly<Record<string, unknown>>>;

/** What an action's handler is given: its input as parsed. */
export type ActionInput<K extends ActionName> = z.output<ReturnType<(typeof ACTIONS)[K]['input']>>;

type DataOf<Id extends ActionDataId> = z.output<(typeof DataShapes)[Id]>;
type BatchDataOf<S> = S extends { batch: { data: infer B extends ActionDataId } } ? DataOf<B> : never;

/** What an action's handler returns as `data` (a batch's result too, for an action with a batch form). */
export type ActionData<K extends ActionName> = DataOf<(typeof ACTIONS)[K]['data']> | BatchDataOf<(typeof ACTIONS)[K]>;
