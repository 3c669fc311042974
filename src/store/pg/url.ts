/**
 * Recognising and showing PostgreSQL URLs — without loading the driver, so a
 * SQLite process (project-cli above all) pays nothing for the second engine.
 */

/** `--db` / `TOOLGATE_DB` select PostgreSQL with a `postgres://` or `postgresql://` URL. */
/** Whether a PostgreSQL URL carries a password, in its userinfo or its query. */
export function pgUrlHasPassword(url: string): boolean {
  try {
    const u = new URL(url);
    return u.password !== '' || PASSWORD_PARAMS.some((p) => u.searchParams.has(p));
  } catch {
    return false;
  }
}

export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/** Query parameters the driver takes as a password (`?password=…` works like `user:pass@`). */
const PASSWORD_PARAMS = ['password', 'sslpassword'];

/** The URL without its password (userinfo or query), for logs and errors. */
export function describePgUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const p of PASSWORD_PARAMS) if (u.searchParams.has(p)) u.searchParams.set(p, '***');
    return u.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

/**
 * Why `target` names no database toolgate can open, or null: a `postgres://` URL and a file path are
 * usable; any other `scheme://` (or `file:`) would otherwise be taken for a relative path — a folder
 * `file:` created beside the caller. Only the scheme is named: the rest may hold a password.
 */
export function unusableDbTarget(target: string): string | null {
  if (isPostgresUrl(target)) return null;
  const scheme = /^([a-z][a-z0-9+.-]*):(\/\/)?/i.exec(target);
  if (!scheme || (scheme[2] === undefined && scheme[1]!.toLowerCase() !== 'file')) return null;
  return `"${scheme[0]}…" is neither a file path nor a postgres:// URL`;
}
