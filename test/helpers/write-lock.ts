/**
 * Holds a database's write lock from another connection, so a call that
 * writes an event keeps running until release: SQLite, BEGIN IMMEDIATE in
 * this test process (not the daemon's); PostgreSQL, the events table locked.
 */
import Database from 'better-sqlite3';
import pg from 'pg';

export async function holdWriteLock(db: string): Promise<() => Promise<void>> {
  if (/^postgres(ql)?:\/\//i.test(db)) {
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    await client.query('BEGIN');
    await client.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
    return async () => {
      await client.query('ROLLBACK');
      await client.end();
    };
  }
  const conn = new Database(db);
  conn.exec('BEGIN IMMEDIATE');
  return async () => {
    conn.exec('ROLLBACK');
    conn.close();
  };
}
