/**
 * Pages of stored messages bounded in bytes (contract section 21: no read or
 * replay grows the daemon by more than a small multiple of
 * `limits.max_result_bytes`). Both engines first read the sizes of the rows a
 * page could hold (`octet_length` of content and metadata — the text itself
 * is not handed to the daemon), keep the rows that fit, and read only those.
 * A single row larger than the whole budget (stored before results were
 * bounded, or by an older version) comes back cut: its content's first
 * characters and a note saying so, and no metadata.
 */

/** A row's place in the thread and what reading it would cost. */
export interface RowSize {
  thread_seq: number;
  bytes: number;
}

/**
 * How many of `sizes` (in reading order) a page of at most `maxBytes` holds,
 * and whether that page is one row too large to read whole. A page always
 * holds at least one row, so paging always moves on.
 */
export function rowsWithin(sizes: readonly RowSize[], maxBytes: number): { count: number; cut: boolean } {
  if (sizes.length === 0) return { count: 0, cut: false };
  if (sizes[0]!.bytes > maxBytes) return { count: 1, cut: true };
  let total = 0;
  let count = 0;
  for (const s of sizes) {
    if (total + s.bytes > maxBytes) break;
    total += s.bytes;
    count++;
  }
  return { count, cut: false };
}

/**
 * Characters of a cut row's content read from the store: at most 4 bytes
 * each in UTF-8, so the prefix is never more than a quarter of the budget
 * over.
 */
export function cutChars(maxBytes: number): number {
  return Math.max(1, Math.floor(maxBytes / 4));
}

/** The content of a cut row: the prefix read, then a note naming the full size. */
export function cutContent(prefix: string, bytes: number): string {
  return `${prefix}\n[toolgate: this stored message is ${bytes} bytes, more than limits.max_result_bytes; only its start is shown]`;
}
