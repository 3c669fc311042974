/** Building blocks shared by the wire shapes: ids and the JSON depth limit. */
import { z } from 'zod';

/** Ids the host supplies (session, thread, tool call): non-empty, bounded. */
export const Id = z.string().min(1).max(200);

/** Deeper JSON than any action needs would only make recursion (hashing, storage) fail later. */
export const MAX_JSON_DEPTH = 32;

/** Nesting depth of a JSON value, counted without recursion and given up past `limit`. */
export function jsonDepthExceeds(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

export const DEPTH_MESSAGE = { message: `nested deeper than ${MAX_JSON_DEPTH} levels` };
export const shallow = (v: unknown): boolean => !jsonDepthExceeds(v, MAX_JSON_DEPTH);

/** A JSON object whose keys the protocol does not fix. */
export const JsonObject = z.record(z.string(), z.unknown());
