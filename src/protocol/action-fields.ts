/**
 * The pieces the actions' input schemas share (src/protocol/action-table.ts),
 * each built on first use (`once`): a project-cli process that runs another
 * module's action never builds them. Inputs carry refinements a JSON Schema
 * cannot say (a real calendar day, a known time zone, end after start), so
 * they are not `$defs` of `schemas/`; `error.input_schema` shows their JSON
 * Schema instead.
 */
import { z } from 'zod';
import { BATCH_MAX_ITEMS, PAGE_DEFAULT_LIMIT, PAGE_MAX_LIMIT } from './limits.js';
import { once } from './once.js';

/** An IANA time zone name the runtime knows (e.g. `Asia/Shanghai`). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** The calendar's time schemas. */
export const timeSchemas = once(() => ({
  /** A calendar date, `YYYY-MM-DD`, checked for a real day (no Feb 30). */
  CalendarDate: z.iso.date().describe('calendar date, YYYY-MM-DD'),

  /** An instant: ISO-8601 date-time that states its offset (`Z` or `±hh:mm`). */
  Instant: z.iso.datetime({ offset: true }).describe('ISO-8601 date-time with an offset, e.g. 2026-04-21T10:00:00+08:00'),

  /** An IANA time zone name the runtime knows (e.g. `Asia/Shanghai`). */
  TimeZone: z
    .string()
    .min(1)
    .max(100)
    .refine(isTimeZone, { message: 'unknown IANA time zone' })
    // The canonical spelling: `asia/shanghai` and `Asia/Shanghai` are one zone (and one cache entry).
    .transform((name) => new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone)
    .describe('IANA time zone, e.g. Europe/Berlin'),
}));

/** The calendar inputs' shared fields. */
export const calendarFields = once(() => {
  const { CalendarDate, Instant, TimeZone } = timeSchemas();
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

  /** One event to create: a `calendar.create` input, or one item of a batch. */
  const EventInput = z
    .strictObject({ title: Title, start_at: Instant, end_at: Instant, location: OptionalText, description: OptionalText })
    .refine(endAfterStart, END_AFTER_START);
  /** A batch's envelope: items are validated one by one, so that a bad item fails alone. */
  const BatchInput = z.strictObject({ items: z.array(z.unknown()).min(1).max(BATCH_MAX_ITEMS) });
  return { CalendarDate, Instant, TimeZone, Title, OptionalText, endAfterStart, END_AFTER_START, EventInput, BatchInput };
});

/** One event of a `calendar.create` (single, or one item of a batch), as parsed. */
export type CalendarEventInput = z.output<ReturnType<typeof calendarFields>['EventInput']>;

/** A memory's key. */
export const memoryKey = once(() => z.string().trim().min(1).max(200));

/** A read's page: how many items (`limit`), from where (`cursor`, the `next_cursor` of the page before). */
export const pageFields = once(() => ({
  limit: z
    .number()
    .int()
    .min(1)
    .max(PAGE_MAX_LIMIT)
    .optional()
    .describe(`items on this page: 1–${PAGE_MAX_LIMIT}, default ${PAGE_DEFAULT_LIMIT}`),
  cursor: z.string().min(1).max(1000).optional().describe('the next_cursor of the previous page; omit for the first page'),
}));
