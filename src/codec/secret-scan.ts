/**
 * The one definition of "a secret in text" (contract section 5), shared by
 * every entry point for host- and model-supplied text and by the log
 * redaction:
 *
 * - any JWS-shaped substring — three base64url segments joined by dots —
 *   whose first segment decodes, after trimming whitespace, to a JSON object
 *   with `alg`, whatever characters surround it (`x<token>`, `auth_<token>`,
 *   a header JSON that starts with a space);
 * - any configured secret, verbatim.
 *
 * A token split by characters a reader or a decoder would skip — any white
 * space (a 76-column wrap, a space after a dot, U+0085), control characters,
 * zero-width and other format
 * characters (U+200B, U+2060, U+FEFF, soft hyphens, tag characters), fillers
 * and variation selectors — or carrying `=` padding counts like a whole one:
 * the scan runs on the text with those characters removed, and a hit's
 * offsets are mapped back to the original text. Removing them can only join
 * runs; a joined run still has to decode to a JSON object with `alg`, which
 * prose, code and base64 data do not.
 *
 * Pure and linear in the length of the text: no backtracking regex. The text
 * is cut into runs of base64url characters separated by dots; for every run
 * R1 followed by `.`, a run R2 and another `.`, every suffix of R1 is a
 * header candidate. Suffixes fall into four alignment classes (start offset
 * mod 4); within a class they decode to nested suffixes of one byte string,
 * so each class is decoded once. Only candidates whose decoded text starts
 * with `{` and ends with `}` (after whitespace) are parsed as JSON, within a
 * budget proportional to the run's length; a run whose budget runs out
 * while such candidates remain is counted as a token — refusing a contrived
 * non-token is safe, letting a token through is not.
 */

export interface SecretHit {
  kind: 'token' | 'configured_secret';
  /** Offsets in the text: [start, end). For a token, from the header candidate to the end of the signature run. */
  start: number;
  end: number;
}

const enum C {
  Dot = 0x2e,
}

/** base64url alphabet → 6-bit value, -1 elsewhere. */
const B64 = (() => {
  const t = new Int16Array(128).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  for (let i = 0; i < alphabet.length; i++) t[alphabet.charCodeAt(i)] = i;
  return t;
})();

const isB64 = (code: number) => code < 128 && B64[code]! >= 0;

/** JSON parses per run before the rest of its candidates count as tokens unparsed. */
const PARSES_PER_RUN = 8;

/** The first secret in `text`, or null. */
export function findSecret(text: string, secrets: readonly string[] = []): SecretHit | null {
  for (const s of secrets) {
    if (s.length === 0) continue;
    const at = text.indexOf(s);
    if (at >= 0) return { kind: 'configured_secret', start: at, end: at + s.length };
  }
  return scanTokens(text, false)[0] ?? null;
}

/**
 * Units of work (characters normalized, base64 characters decoded, bytes
 * handed to JSON.parse) the token scan of `text` performs: the measure the
 * linear-time tests assert on, since a timing threshold proves nothing.
 */
export function tokenScanCost(text: string): number {
  work = 0;
  scanTokens(text, true);
  return work;
}
let work = 0;

/** Every secret in `text`, left to right, non-overlapping (for masking). */
function findSecrets(text: string, secrets: readonly string[] = []): SecretHit[] {
  const hits: SecretHit[] = [];
  for (const s of secrets) {
    if (s.length === 0) continue;
    for (let at = text.indexOf(s); at >= 0; at = text.indexOf(s, at + s.length)) {
      hits.push({ kind: 'configured_secret', start: at, end: at + s.length });
    }
  }
  hits.push(...scanTokens(text, true));
  hits.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: SecretHit[] = [];
  for (const h of hits) {
    const last = merged[merged.length - 1];
    if (last && h.start < last.end) last.end = Math.max(last.end, h.end);
    else merged.push({ ...h });
  }
  return merged;
}

/** `text` with every secret replaced by `[redacted]`. */
export function maskSecrets(text: string, secrets: readonly string[] = []): string {
  // Fast path: a text without a dot holds no token.
  if (secrets.length === 0 && !text.includes('.')) return text;
  const hits = findSecrets(text, secrets);
  if (hits.length === 0) return text;
  let out = '';
  let at = 0;
  for (const h of hits) {
    out += `${text.slice(at, h.start)}[redacted]`;
    at = h.end;
  }
  return out + text.slice(at);
}

/**
 * Where in a JSON value (strings and object keys, at any depth) a secret
 * sits: a path like `worker_output.answer` or `input.items.0.title`, or null.
 * Iterative, so no depth blows the stack.
 */
export function findSecretIn(value: unknown, secrets: readonly string[] = [], root = ''): string | null {
  const stack: Array<[unknown, string]> = [[value, root]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (findSecret(v, secrets)) return path || '(value)';
    } else if (v !== null && typeof v === 'object') {
      if (Array.isArray(v)) {
        for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], join(path, String(i))]);
      } else {
        for (const [k, x] of Object.entries(v)) {
          if (findSecret(k, secrets)) return join(path, '(key)');
          stack.push([x, join(path, k)]);
        }
      }
    }
  }
  return null;
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** The tokens of `text` (the first one only unless `all`), in offsets of `text`. */
function scanTokens(text: string, all: boolean): SecretHit[] {
  // A token has two dots, which normalization never removes.
  const first = text.indexOf('.');
  if (first < 0 || text.indexOf('.', first + 1) < 0) return [];
  const { norm, map } = normalize(text);
  const hits: SecretHit[] = [];
  for (let from = 0; ; ) {
    const hit = findToken(norm, from);
    if (!hit) break;
    hits.push(
      map
        ? { kind: 'token', start: map[hit.start]!, end: signatureEnd(text, map[hit.dot]!, map[hit.end - 1]! + 1) }
        : { kind: 'token', start: hit.start, end: hit.end },
    );
    if (!all) break;
    from = hit.end;
  }
  return hits;
}

/**
 * Where a split token's signature ends in the original text. Removing
 * whitespace joins the signature to the words after it (`<sig> not found`),
 * so the run found in the normalized text may be too long: the signature
 * goes on across line breaks, invisible characters and padding (a wrap) but
 * stops at a space or tab once it has begun. `dot` is the offset of the dot
 * before the signature; the result is at most `limit`.
 */
function signatureEnd(text: string, dot: number, limit: number): number {
  let i = dot + 1;
  while (i < limit && !isB64(text.charCodeAt(i))) i++; // whatever separates the dot from the signature
  let end = i;
  while (i < limit) {
    const c = text.charCodeAt(i);
    if (isB64(c) || c === 0x3d /* = */) end = ++i;
    else if (c === 0x20 || c === 0x09) break;
    else i++;
  }
  return end;
}

/**
 * Characters a reader or a base64 decoder skips (any Unicode white space — U+0085 NEL included, which
 * JavaScript's `\s` is not —, control, format and default-ignorable characters, `=`); ASCII ones are
 * decided by code below.
 */
const IGNORABLE = /[\s=\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
const IGNORABLE_CHAR = /^[\s\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]$/u;

/**
 * `text` without its ignorable characters, and for each remaining code unit
 * its offset in `text` (null when nothing was removed). One pass.
 */
function normalize(text: string): { norm: string; map: Int32Array | null } {
  if (!IGNORABLE.test(text)) return { norm: text, map: null };
  const n = text.length;
  work += n;
  const map = new Int32Array(n);
  const units = new Uint16Array(n);
  let o = 0;
  for (let i = 0; i < n; ) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      // Space, `=`, and every C0 control and DEL (tab and line breaks among them).
      if (!(c <= 0x20 || c === 0x3d /* = */ || c === 0x7f)) {
        map[o] = i;
        units[o++] = c;
      }
      i++;
      continue;
    }
    const width = c >= 0xd800 && c <= 0xdbff && i + 1 < n ? 2 : 1;
    if (!IGNORABLE_CHAR.test(text.slice(i, i + width))) {
      for (let k = 0; k < width; k++) {
        map[o] = i + k;
        units[o++] = text.charCodeAt(i + k);
      }
    }
    i += width;
  }
  let norm = '';
  for (let at = 0; at < o; at += 8192) norm += String.fromCharCode(...units.subarray(at, Math.min(o, at + 8192)));
  return { norm, map };
}

/** The first token at or after `from`. */
function findToken(text: string, from = 0): (SecretHit & { dot: number }) | null {
  const n = text.length;
  let i = from;
  while (i < n) {
    // Next dot; the base64url run ending right before it is R1.
    const dot = text.indexOf('.', i);
    if (dot < 0) return null;
    let r1 = dot;
    while (r1 > i && isB64(text.charCodeAt(r1 - 1))) r1--;
    // R2: the (possibly empty) run after the dot, which must end at another dot.
    let r2 = dot + 1;
    while (r2 < n && isB64(text.charCodeAt(r2))) r2++;
    if (r1 < dot && r2 < n && text.charCodeAt(r2) === C.Dot) {
      const start = headerStart(text, r1, dot);
      if (start >= 0) {
        let end = r2 + 1;
        while (end < n && isB64(text.charCodeAt(end))) end++;
        return { kind: 'token', start, end, dot: r2 };
      }
    }
    i = dot + 1;
  }
  return null;
}

/**
 * The earliest offset in [runStart, runEnd) from which the run decodes to a
 * JSON object with `alg` (after trimming whitespace), or -1.
 */
function headerStart(text: string, runStart: number, runEnd: number): number {
  let budget = PARSES_PER_RUN;
  let best = -1;
  for (let align = 0; align < 4; align++) {
    const first = runStart + align;
    if (first >= runEnd) break;
    const chars = runEnd - first;
    if (chars % 4 === 1) continue; // no base64 string has this length
    const bytes = decode(text, first, runEnd);
    // The candidate of group g starts at byte 3g; all of them end where the run ends.
    const last = lastNonSpace(bytes);
    if (last < 0 || bytes[last] !== 0x7d /* } */) continue;
    // Each group's first non-space byte is carried forward while the next group starts inside the same
    // stretch of spaces (as is the first after its `{`), so a run of spaces is walked once, not once per
    // group: a run decoding to many spaces then `}` stays linear.
    let s = -2;
    let sFor = -1;
    let q = -1;
    for (let g = 0; g * 3 < bytes.length; g++) {
      const from = g * 3;
      if (s === -1) break; // nothing but spaces from an earlier group on
      if (!(s >= from && (s === from || startsSpace(bytes, from)))) s = firstNonSpace(bytes, from);
      if (s < 0 || bytes[s] !== 0x7b /* { */) continue;
      // An object with `alg` has a key: `{` then (after whitespace) `"`. Random base64 rarely decodes so.
      if (sFor !== s) {
        q = firstNonSpace(bytes, s + 1);
        sFor = s;
      }
      if (q < 0 || bytes[q] !== 0x22 /* " */) continue;
      const at = first + g * 4;
      if (best >= 0 && at >= best) break;
      if (budget <= 0) {
        best = at;
        break;
      }
      budget--;
      if (isAlgObject(bytes, g * 3)) {
        best = at;
        break;
      }
    }
  }
  return best;
}

/** Lenient base64url decoding of text[from, to) (a trailing partial group gives its whole bytes). */
function decode(text: string, from: number, to: number): Uint8Array {
  work += to - from;
  const out = new Uint8Array(Math.floor(((to - from) * 3) / 4));
  let o = 0;
  let acc = 0;
  let bits = 0;
  for (let i = from; i < to; i++) {
    acc = ((acc << 6) | B64[text.charCodeAt(i)]!) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  return out.subarray(0, o);
}

/** JSON whitespace, plus what String.prototype.trim also removes in one byte (VT, FF) and UTF-8's NBSP lead. */
const isSpaceByte = (b: number) => b === 0x20 || (b >= 0x09 && b <= 0x0d);

/** Whether a space (ASCII or a multi-byte one trim() removes) starts at `i`. */
function startsSpace(bytes: Uint8Array, i: number): boolean {
  return i < bytes.length && (isSpaceByte(bytes[i]!) || isUnicodeSpaceAt(bytes, i));
}

function firstNonSpace(bytes: Uint8Array, from: number): number {
  for (let i = from; i < bytes.length; ) {
    work++;
    if (isSpaceByte(bytes[i]!)) i++;
    else if (isUnicodeSpaceAt(bytes, i)) i += spaceLength(bytes, i);
    else return i;
  }
  return -1;
}

function lastNonSpace(bytes: Uint8Array): number {
  for (let i = bytes.length - 1; i >= 0; ) {
    work++;
    if (isSpaceByte(bytes[i]!)) i--;
    else if (isUnicodeSpaceTail(bytes, i)) i -= unicodeSpaceTailLength(bytes, i);
    else return i;
  }
  return -1;
}

/** Multi-byte spaces trim() removes (NBSP, BOM, U+2000–U+200A, U+2028/9, U+202F, U+205F, U+3000, U+1680) — by their UTF-8 bytes. */
function isUnicodeSpaceAt(b: Uint8Array, i: number): boolean {
  return spaceLength(b, i) > 0;
}
function isUnicodeSpaceTail(b: Uint8Array, i: number): boolean {
  return unicodeSpaceTailLength(b, i) > 0;
}
function unicodeSpaceTailLength(b: Uint8Array, i: number): number {
  for (const len of [2, 3]) if (i - len + 1 >= 0 && spaceLength(b, i - len + 1) === len) return len;
  return 0;
}
function spaceLength(b: Uint8Array, i: number): number {
  const b0 = b[i], b1 = b[i + 1], b2 = b[i + 2];
  if (b0 === 0xc2 && b1 === 0xa0) return 2; // U+00A0
  if (b0 === 0xef && b1 === 0xbb && b2 === 0xbf) return 3; // U+FEFF
  if (b0 === 0xe1 && b1 === 0x9a && b2 === 0x80) return 3; // U+1680
  if (b0 === 0xe2 && b1 === 0x80 && b2 !== undefined && ((b2 >= 0x80 && b2 <= 0x8a) || b2 === 0xa8 || b2 === 0xa9 || b2 === 0xaf)) return 3;
  if (b0 === 0xe2 && b1 === 0x81 && b2 === 0x9f) return 3; // U+205F
  if (b0 === 0xe3 && b1 === 0x80 && b2 === 0x80) return 3; // U+3000
  return 0;
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

function isAlgObject(bytes: Uint8Array, from: number): boolean {
  work += bytes.length - from;
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes.subarray(from)).trim());
  } catch {
    return false;
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, 'alg');
}
