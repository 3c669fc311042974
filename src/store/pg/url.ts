/**
 * Recognising and showing PostgreSQL URLs — without loading the driver, so a
 * SQLite process (project-cli above all) pays nothing for the second engine.
 */

/** `--db` / `TOOLGATE_DB` select PostgreSQL with a `postgres://` or `postgresql://` URL. */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/** The URL without its password, for logs and errors. */
export function describePgUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}
