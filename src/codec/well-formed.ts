/**
 * Strings every engine stores as they are: no U+0000 (PostgreSQL's `text`
 * and `jsonb` refuse it) and no unpaired UTF-16 surrogate (`jsonb` refuses
 * it; UTF-8 cannot encode it, so SQLite would store U+FFFD instead and two
 * different strings would become one). Calls are checked once, at admission,
 * with this one walk; nothing malformed is stored, rewritten or run.
 *
 * Pure and schema-free: project-cli loads it at start-up.
 */

/** U+0000, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
// eslint-disable-next-line no-control-regex -- U+0000 is what this looks for
const MALFORMED = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is wrong with `text`, or null when any engine stores it as it is. */
export function malformedReason(text: string): string | null {
  const m = MALFORMED.exec(text);
  if (!m) return null;
  return m[0] === '\u0000' ? 'holds U+0000 (NUL)' : 'holds an unpaired UTF-16 surrogate';
}

/** The first malformed string of a JSON value: its dotted path (`(key)` for an object key) and why. */
export interface MalformedString {
  path: string;
  reason: string;
}

/**
 * Walks a JSON value (strings, object keys, arrays, without recursion) and
 * returns the first string no engine can store as it is, or null.
 */
export function findMalformedString(value: unknown, root = ''): MalformedString | null {
  const stack: Array<[unknown, string]> = [[value, root]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      const reason = malformedReason(v);
      if (reason) return { path: path || '(value)', reason };
    } else if (v !== null && typeof v === 'object') {
      if (Array.isArray(v)) {
        for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], join(path, String(i))]);
      } else {
        const entries = Object.entries(v);
        for (const [k] of entries) {
          const reason = malformedReason(k);
          // The key itself is not echoed: the path names the object that holds it.
          if (reason) return { path: join(path, '(key)'), reason };
        }
        for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i]![1], join(path, entries[i]![0])]);
      }
    }
  }
  return null;
}

/** The one sentence every boundary answers with. */
export function malformedMessage(found: MalformedString): string {
  return `${found.path} ${found.reason}, which no string may hold; send well-formed text`;
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
