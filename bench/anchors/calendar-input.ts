/**
 * The `calendar.create` input as the anchors validate it: the same rules as
 * toolgate's action (title 1–500 chars and not blank, ISO-8601 instants with
 * an offset, optional texts, end after start), written out here so that the
 * anchors never depend on toolgate's internals.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';

const Instant = z.iso.datetime({ offset: true });
const OptionalText = z.string().max(5000).nullable().optional();

export const CalendarCreateInput = z
  .strictObject({
    title: z.string().min(1).max(500).refine((t) => t.trim().length > 0, 'title must not be blank'),
    start_at: Instant,
    end_at: Instant,
    location: OptionalText,
    description: OptionalText,
  })
  .refine((v) => Date.parse(v.end_at) > Date.parse(v.start_at), { message: 'end_at must be after start_at', path: ['end_at'] });

/** The one input every entry of the bench is called with (title varies per call). */
export function calendarInput(i: number): { title: string; start_at: string; end_at: string } {
  return { title: `Bench ${i}`, start_at: '2026-04-21T10:00:00+08:00', end_at: '2026-04-21T11:00:00+08:00' };
}

/** The events table the MCP anchor writes (the same columns as toolgate's). */
export const EVENTS_DDL = `CREATE TABLE IF NOT EXISTS events (
  id TEXT PRIMARY KEY, owner_id TEXT NOT NULL, title TEXT NOT NULL, start_at TEXT NOT NULL, end_at TEXT NOT NULL,
  start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL CHECK (end_ms > start_ms), location TEXT, description TEXT,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`;

/** The anchors' insert of one event (named parameters: an event of `newEvent` plus its instants in ms). */
export const INSERT_EVENT = `INSERT INTO events (id, owner_id, title, start_at, end_at, start_ms, end_ms, location, description, created_at, updated_at)
   VALUES (@id, @owner_id, @title, @start_at, @end_at, @start_ms, @end_ms, @location, @description, @created_at, @updated_at)`;

/** The event both MCP anchors store and answer with for a `calendar.create` of `input`. */
export function newEvent(input: z.infer<typeof CalendarCreateInput>, now: string) {
  return {
    id: `evt_${randomUUID()}`,
    owner_id: 'bench',
    title: input.title,
    start_at: input.start_at,
    end_at: input.end_at,
    location: input.location ?? null,
    description: input.description ?? null,
    created_at: now,
    updated_at: now,
  };
}
