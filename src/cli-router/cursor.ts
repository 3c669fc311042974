/**
 * A paged action's `cursor`: the codec's opaque cursor (src/codec/cursor.ts),
 * where anything a model makes up or alters is an `INVALID_ACTION_INPUT`
 * naming `cursor`, never a database error.
 */
import { ActionError } from './errors.js';
import { decodeCursor } from '../codec/cursor.js';

export { pageOf } from '../codec/cursor.js';

const INVALID = "cursor is not a next_cursor this read returned: omit it for the first page, or pass the previous page's next_cursor unchanged";

/** The position a cursor holds, checked against the read's own shape (`check`); throws INVALID_ACTION_INPUT. */
export function positionOf<T>(cursor: string, check: (position: unknown) => position is T): T {
  const position = decodeCursor(cursor, check);
  if (position === undefined) throw new ActionError('INVALID_ACTION_INPUT', INVALID, { issues: [{ path: 'cursor', message: 'not a cursor this read returned' }] });
  return position;
}
