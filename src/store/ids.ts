import { v7 as uuidv7 } from 'uuid';

/**
 * A new row id: a UUIDv7 (48 bits of milliseconds, then 74 random bits),
 * monotonic within the process. Why not a random UUID: the store's id
 * indexes are B-trees, and a random key lands every insert on a different
 * leaf page, so each call dirtied a page per index and its commit wrote
 * (and fsynced) that many WAL pages; time-ordered keys append to the same
 * last page, which a group commit then writes once for the whole group.
 * The random part keeps ids unguessable.
 */
export function newRowId(prefix: string): string {
  return `${prefix}${uuidv7()}`;
}
