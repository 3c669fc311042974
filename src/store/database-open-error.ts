/** The database file could not be opened or migrated (wrong path, not SQLite, newer schema…). */
export class DatabaseOpenError extends Error {
  override name = 'DatabaseOpenError';
  /** The server could not be reached or is not accepting connections yet: trying again later may work. */
  readonly unavailable: boolean;
  constructor(message: string, opts: { unavailable?: boolean } = {}) {
    super(message);
    this.unavailable = opts.unavailable ?? false;
  }
}
