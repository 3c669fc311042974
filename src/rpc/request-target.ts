/**
 * The request target of an HTTP request as a URL, or null when it is not one
 * this server can read. Node hands the raw target over unchecked (`//`,
 * `http://[::1/`, `*`, garbage): parsing it must never throw into a route.
 * Origin-form (`/path?query`) is read against a fixed origin, so `//x` stays
 * a path; absolute-form (`http://host/path`) is accepted as HTTP/1.1 says a
 * server must; anything else is null (answered 400).
 */
export function requestTarget(raw: string | undefined): URL | null {
  const target = raw ?? '/';
  try {
    if (target.startsWith('/')) return new URL(`http://localhost${target}`);
    if (/^https?:\/\//i.test(target)) return new URL(target);
  } catch {
    /* not a URL */
  }
  return null;
}

/**
 * The path of a request target as sent, or null when requestTarget reads none. Dot segments
 * and percent-escapes are kept: a route whose segments are ids (`/threads/{id}/…`) matches
 * this, since an id may be `.` or `..`, which URL parsing removes (`%2E%2E` too).
 */
export function rawPath(raw: string | undefined): string | null {
  const target = raw ?? '/';
  if (!requestTarget(target)) return null;
  const path = target.startsWith('/') ? target : target.replace(/^https?:\/\/[^/?#]*/i, '');
  return path.split(/[?#]/, 1)[0] || '/';
}
