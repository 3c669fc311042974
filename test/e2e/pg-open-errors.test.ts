/**
 * Bad PostgreSQL configuration from outside: `toolgate serve` exits non-zero
 * with one clear line on stderr (and never the password) for each cause.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { TEST_BEARER_SECRET } from '../helpers/tokens.js';
import { freshPgDatabase, needsPg, pgQuery, TEST_PG_URL, withDatabase } from '../helpers/pg.js';

function serve(db: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [TOOLGATE_BIN, 'serve', '--stdio'], {
      // TOOLGATE_DB, not --db: the same selection through the environment.
      env: { PATH: process.env.PATH ?? '', TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_HOME: tempDir(), TOOLGATE_DB: db },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // Stdin ends at once: a daemon that did start shuts down cleanly (contract §2).
    proc.stdin.end();
    let stderr = '';
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    proc.on('exit', (code) => resolve({ code, stderr }));
  });
}

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe('serve refuses bad PostgreSQL configuration', needsPg, () => {
  const password = new URL(TEST_PG_URL ?? 'postgres://x:y@h/d').password;
  const refused = async (db: string, pattern: RegExp) => {
    const { code, stderr } = await serve(db);
    assert.notEqual(code, 0, stderr);
    assert.match(stderr, pattern);
    assert.ok(!stderr.includes(password), 'the password stays out of stderr');
  };

  test('an unreachable server', async () => {
    const u = new URL(TEST_PG_URL!);
    u.port = String(await closedPort());
    await refused(u.toString(), /cannot reach the PostgreSQL server at 127\.0\.0\.1:\d+/);
  });

  test('wrong credentials', async () => {
    const u = new URL(TEST_PG_URL!);
    u.password = `${password}-wrong`;
    await refused(u.toString(), /PostgreSQL refused the credentials of user "toolgate"/);
  });

  test('a database that does not exist', async () => {
    await refused(withDatabase(TEST_PG_URL!, 'tg_missing_database'), /database "tg_missing_database" does not exist/);
  });

  test('a schema from a newer toolgate', async () => {
    const db = await freshPgDatabase();
    // A first start creates the schema; then a newer version is recorded.
    const first = await serve(db.url);
    assert.equal(first.code, 0, first.stderr);
    await pgQuery(db.url, 'INSERT INTO toolgate_schema (version) VALUES ((SELECT max(version) + 1 FROM toolgate_schema))');
    await refused(db.url, /newer than this toolgate knows/);
  });
});
