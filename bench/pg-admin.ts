import pg from 'pg';

/** Runs one administrative statement (CREATE / DROP DATABASE) on its own connection. */
export async function pgAdmin(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
