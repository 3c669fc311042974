/**
 * The restricted CLI from outside: the real `bin/project-cli.mjs`, spawned
 * with an argv array (never a shell) and an explicit, minimal environment.
 * Every run must print exactly one JSON document and exit with the code of
 * contract section 6.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { PROJECT_CLI_BIN, tempDir } from '../helpers/repo.js';
import {
  ALL_ACTIONS,
  TEST_KEY_PAIR,
  TEST_VERIFY_KEY_JSON,
  generateTestKeyPair,
  mintCredential,
  recordTrustedKey,
  type MintOptions,
} from '../helpers/credentials.js';
import { mintBearer } from '../helpers/tokens.js';
import { argsSha256 } from '../../src/codec/canonical-json.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Tx } from '../../src/store/store.js';

// ---------------------------------------------------------------- harness

type Env = Record<string, string | undefined>;

interface CliDoc {
  ok: boolean;
  module: string | null;
  method: string | null;
  data?: any;
  error?: { code: string; message: string; module: string | null; method: string | null; input_schema?: unknown; [k: string]: unknown };
}

interface CliRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  doc: CliDoc;
}

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh folder and database for one test. */
function sandbox(): { dir: string; db: string } {
  const dir = tempDir('toolgate-cli-');
  dirs.push(dir);
  return { dir, db: join(dir, 'toolgate.db') };
}

/**
 * Spawns project-cli with exactly `env` (nothing inherited), stdin piped and
 * ended, and checks the output is one JSON document on one line.
 */
function cli(args: readonly string[], env: Env, stdin = ''): Promise<CliRun> {
  const cleanEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) cleanEnv[k] = v;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PROJECT_CLI_BIN, ...args], { env: cleanEnv, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (exitCode) => {
      try {
        resolve({ exitCode, stdout, stderr, doc: parseOneDocument(stdout, stderr) });
      } catch (err) {
        reject(err);
      }
    });
    child.stdin.end(stdin);
  });
}

function parseOneDocument(stdout: string, stderr: string): CliDoc {
  assert.ok(stdout.endsWith('\n'), `stdout ends with one newline: ${JSON.stringify(stdout)} (stderr: ${stderr})`);
  const body = stdout.slice(0, -1);
  assert.ok(!body.includes('\n'), `stdout is a single line: ${JSON.stringify(stdout)}`);
  const doc = JSON.parse(body) as CliDoc;
  assert.equal(body, JSON.stringify(doc), 'stdout is one compact JSON document and nothing else');
  assert.equal(typeof doc.ok, 'boolean');
  assert.ok('module' in doc && 'method' in doc, 'the document names module and method');
  if (doc.ok) {
    assert.ok('data' in doc && !('error' in doc));
  } else {
    assert.ok(doc.error && !('data' in doc));
    assert.equal(typeof doc.error.code, 'string');
    assert.equal(typeof doc.error.message, 'string');
    assert.equal(doc.error.module, doc.module);
    assert.equal(doc.error.method, doc.method);
  }
  return doc;
}

/** An environment holding a credential for `sub` (all actions unless narrowed). */
async function envFor(db: string, sub: string, opts: Partial<MintOptions> = {}): Promise<Env> {
  const token = await mintCredential({ sub, actions: ALL_ACTIONS, ...opts });
  await recordTrustedKey(db);
  return { PROJECT_CLI_CREDENTIAL: token, PROJECT_CLI_VERIFY_KEY: TEST_VERIFY_KEY_JSON, TOOLGATE_DB: db };
}

function assertOk(run: CliRun, module: string, method: string): any {
  assert.equal(run.exitCode, 0, `expected success, got ${run.stdout} ${run.stderr}`);
  assert.equal(run.doc.ok, true);
  assert.equal(run.doc.module, module);
  assert.equal(run.doc.method, method);
  return run.doc.data;
}

function assertFailure(run: CliRun, code: string, exitCode: number): NonNullable<CliDoc['error']> {
  assert.equal(run.doc.ok, false, `expected ${code}, got ${run.stdout}`);
  assert.equal(run.doc.error!.code, code, run.stdout);
  assert.equal(run.exitCode, exitCode, run.stdout);
  return run.doc.error!;
}

function assertInvalidInput(run: CliRun): NonNullable<CliDoc['error']> {
  const error = assertFailure(run, 'INVALID_ACTION_INPUT', 2);
  const schema = error.input_schema;
  assert.ok(schema !== null && typeof schema === 'object' && !Array.isArray(schema), 'error.input_schema is an object');
  return error;
}

/** The token never leaks into anything the CLI prints. */
function assertNoLeak(run: CliRun, token: string | undefined): void {
  if (!token) return;
  assert.ok(!run.stdout.includes(token), 'stdout does not contain the credential');
  assert.ok(!run.stderr.includes(token), 'stderr does not contain the credential');
}

function withDb<T>(file: string, fn: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

function countEvents(file: string): number {
  if (!existsSync(file)) return 0; // never opened: nothing was written
  return withDb(file, (db) => (db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n);
}

const STANDUP = ['--title', 'Standup', '--start-at', '2026-04-21T07:00:00+08:00', '--end-at', '2026-04-21T07:30:00+08:00'];
const STANDUP_FIELDS = { title: 'Standup', start_at: '2026-04-21T07:00:00+08:00', end_at: '2026-04-21T07:30:00+08:00' };
const readDay = (date: string, timezone: string) => ['calendar', 'read', '--mode', 'day', '--date', date, '--timezone', timezone];

/**
 * Writes what a test starts from straight into the database, in one unit of the store project-cli uses:
 * for tests about what comes after (a read, an invite answered), not about how the event or invite got
 * there — creating and sharing through the CLI are tests of their own here. A spawn of project-cli costs
 * ~0.15 s of CPU; this, a few milliseconds.
 */
async function seed<T>(db: string, work: (tx: Tx) => Promise<T>): Promise<T> {
  const store = openSqliteStore(db);
  try {
    return await store.transaction(work);
  } finally {
    await store.close();
  }
}

/** alice's Standup, as `calendar create` with STANDUP stores it. */
const seedStandup = (db: string) =>
  seed(db, async (tx) => {
    await tx.users.ensure('alice');
    return tx.events.create('alice', STANDUP_FIELDS);
  });

/** alice shares her event with bob (who exists, as a user who called once does). */
async function aliceSharesWithBob(db: string) {
  const alice = await envFor(db, 'alice');
  const bob = await envFor(db, 'bob');
  const event = await seedStandup(db);
  await seed(db, (tx) => tx.users.ensure('bob'));
  const shared = assertOk(await cli(['calendar', 'share', '--event-id', event.id, '--user-ids', 'bob'], alice), 'calendar', 'share');
  assert.equal(shared.event_id, event.id);
  assert.equal(shared.invites.length, 1);
  assert.equal(shared.invites[0].user_id, 'bob');
  assert.equal(shared.invites[0].status, 'pending');
  return { alice, bob, eventId: event.id as string, inviteId: shared.invites[0].invite_id as string };
}

// ---------------------------------------------------------------- tests

describe('project-cli', { concurrency: 3 }, () => {
  // ------------------------------------------------------------ 0: success

  test('calendar.create from kebab-case flags stores the event and exits 0', async () => {
    const { db } = sandbox();
    const env = await envFor(db, 'alice');
    const data = assertOk(await cli(['calendar', 'create', ...STANDUP, '--location', 'Room 1'], env), 'calendar', 'create');
    assert.equal(data.event.owner_id, 'alice');
    assert.equal(data.event.title, 'Standup');
    assert.equal(data.event.start_at, '2026-04-21T07:00:00+08:00');
    assert.equal(data.event.end_at, '2026-04-21T07:30:00+08:00');
    assert.equal(data.event.location, 'Room 1');
    assert.equal(data.event.description, null);
    assert.equal(typeof data.event.id, 'string');
    assert.equal(countEvents(db), 1);
  });

  test('calendar.read day mode from flags uses the given time zone for the day', async () => {
    const { db } = sandbox();
    const env = await envFor(db, 'alice');
    // 07:00 in Shanghai is 23:00 UTC the day before.
    const event = await seedStandup(db);
    const shanghai = assertOk(await cli(readDay('2026-04-21', 'Asia/Shanghai'), env), 'calendar', 'read');
    assert.equal(shanghai.count, 1);
    assert.deepEqual(shanghai.items, [event]);
    const utc = assertOk(await cli(readDay('2026-04-21', 'UTC'), env), 'calendar', 'read');
    assert.deepEqual(utc, { items: [], count: 0, next_cursor: null });
  });

  test('calendar.read from stdin JSON answers byte for byte like the same input from flags', async () => {
    const { db } = sandbox();
    const env = await envFor(db, 'alice');
    await seedStandup(db);
    const viaFlags = await cli(readDay('2026-04-21', 'Asia/Shanghai'), env);
    const viaStdin = await cli(['calendar', 'read'], env, JSON.stringify({ mode: 'day', date: '2026-04-21', timezone: 'Asia/Shanghai' }));
    assert.equal(assertOk(viaStdin, 'calendar', 'read').count, 1);
    assert.equal(viaStdin.stdout, viaFlags.stdout);
  });

  test('flags win over the same fields on stdin', async () => {
    const { db } = sandbox();
    const env = await envFor(db, 'alice');
    const stdin = JSON.stringify({ title: 'from stdin', start_at: '2026-04-21T07:00:00+08:00', end_at: '2026-04-21T07:30:00+08:00', location: 'stdin room' });
    const created = assertOk(await cli(['calendar', 'create', '--title', 'from flag'], env, stdin), 'calendar', 'create');
    assert.equal(created.event.title, 'from flag', 'the flag overrides stdin');
    assert.equal(created.event.location, 'stdin room', 'stdin fields without a flag are kept');

    const read = await cli(['calendar', 'read', '--date', '2026-04-21'], env, JSON.stringify({ mode: 'day', date: '2026-04-25', timezone: 'Asia/Shanghai' }));
    assert.equal(assertOk(read, 'calendar', 'read').count, 1, 'read the flag date, not the stdin date');
  });

  test('a verify key given by PROJECT_CLI_VERIFY_KEY_FILE works', async () => {
    const { dir, db } = sandbox();
    const keyFile = join(dir, 'verify.jwk');
    writeFileSync(keyFile, TEST_VERIFY_KEY_JSON);
    const { PROJECT_CLI_VERIFY_KEY: _inline, ...env } = await envFor(db, 'alice');
    assertOk(await cli(readDay('2026-04-21', 'UTC'), { ...env, PROJECT_CLI_VERIFY_KEY_FILE: keyFile }), 'calendar', 'read');
  });

  test('an ES256 credential verifies with its P-256 public key', async () => {
    const { db } = sandbox();
    const es = await generateTestKeyPair('ES256');
    const token = await mintCredential({ sub: 'alice', actions: ['calendar.read'], key: es });
    await recordTrustedKey(db, es);
    const run = await cli(readDay('2026-04-21', 'UTC'), { PROJECT_CLI_CREDENTIAL: token, PROJECT_CLI_VERIFY_KEY: JSON.stringify(es.publicJwk), TOOLGATE_DB: db });
    assertOk(run, 'calendar', 'read');
  });

  test('a title full of shell metacharacters is stored verbatim and never run', async () => {
    const { dir, db } = sandbox();
    const marker = join(dir, 'pwned');
    const title = `$(touch ${marker}); rm -rf ${dir} \`touch ${marker}\` | cat && echo "x" > ${marker}; 'q' * ~`;
    const env = await envFor(db, 'alice');
    const { event } = assertOk(
      await cli(['calendar', 'create', '--title', title, '--start-at', '2026-04-21T10:00:00Z', '--end-at', '2026-04-21T11:00:00Z'], env),
      'calendar',
      'create',
    );
    assert.equal(event.title, title);
    const read = assertOk(await cli(['calendar', 'read', '--mode', 'event', '--event-id', event.id], env), 'calendar', 'read');
    assert.equal(read.items[0].title, title);
    assert.equal(withDb(db, (d) => (d.prepare('SELECT title FROM events WHERE id = ?').get(event.id) as { title: string }).title), title);
    assert.equal(existsSync(marker), false, 'no command in the title ran');
    assert.equal(existsSync(db), true, 'nothing was deleted');
  });

  // ------------------------------------------------------------ 2: bad input

  test('an instant without an offset or a non-existent date is INVALID_ACTION_INPUT (exit 2)', async () => {
    const { db } = sandbox();
    const env = await envFor(db, 'alice');
    for (const start of ['2026-04-21T10:00:00', '2026-04-21 10:00+08:00']) {
      const error = assertInvalidInput(await cli(['calendar', 'create', '--title', 'T', '--start-at', start, '--end-at', '2026-04-21T11:00:00Z'], env));
      assert.ok(JSON.stringify(error.issues).includes('start_at'), `issues name start_at for ${start}`);
    }
    assertInvalidInput(await cli(readDay('2026-02-30', 'UTC'), env));
    assert.equal(countEvents(db), 0);
  });

  test('end_at before start_at is INVALID_ACTION_INPUT (exit 2)', async () => {
    const { db } = sandbox();
    const env = await envFor(db, 'alice');
    const error = assertInvalidInput(
      await cli(['calendar', 'create', '--title', 'T', '--start-at', '2026-04-21T11:00:00Z', '--end-at', '2026-04-21T10:00:00Z'], env),
    );
    assert.ok(JSON.stringify(error.issues).includes('end_at'));
    // Same instant written with two offsets: still not after.
    assertInvalidInput(await cli(['calendar', 'create', '--title', 'T', '--start-at', '2026-04-21T18:00:00+08:00', '--end-at', '2026-04-21T10:00:00Z'], env));
    assert.equal(countEvents(db), 0);
  });

  test('an unknown input field on stdin is INVALID_ACTION_INPUT (exit 2)', async () => {
    const { db } = sandbox();
    const env = await envFor(db, 'alice');
    const stdin = JSON.stringify({ title: 'T', start_at: '2026-04-21T10:00:00Z', end_at: '2026-04-21T11:00:00Z', colour: 'red' });
    assertInvalidInput(await cli(['calendar', 'create'], env, stdin));
    assert.equal(countEvents(db), 0);
  });

  test('stdin that is not JSON is INVALID_ACTION_INPUT (exit 2)', async () => {
    const { db } = sandbox();
    assertInvalidInput(await cli(['calendar', 'read'], await envFor(db, 'alice'), '{mode: day'));
  });

  test('stdin that is a JSON array or null is INVALID_ACTION_INPUT (exit 2)', async () => {
    const { db } = sandbox();
    const env = await envFor(db, 'alice');
    for (const stdin of ['[{"mode":"day","date":"2026-04-21"}]', 'null']) {
      assertInvalidInput(await cli(['calendar', 'read'], env, stdin));
    }
  });

  test('an unknown flag or a stray positional is INVALID_ACTION_INPUT (exit 2)', async () => {
    const { db } = sandbox();
    const env = await envFor(db, 'alice');
    assertInvalidInput(await cli([...readDay('2026-04-21', 'UTC'), '--colour', 'red'], env));
    assertInvalidInput(await cli([...readDay('2026-04-21', 'UTC'), 'extra'], env));
  });

  test('an action outside the registry is UNKNOWN_ACTION (exit 2)', async () => {
    const { db } = sandbox();
    const env = await envFor(db, 'alice', { actions: [...ALL_ACTIONS, 'calendar.teleport'] });
    const unknown = assertFailure(await cli(['calendar', 'teleport'], env), 'UNKNOWN_ACTION', 2);
    // What the credential may run instead, the unknown one left out.
    assert.deepEqual(unknown.allowed_actions, ALL_ACTIONS);
    assertFailure(await cli(['weather', 'read'], env), 'UNKNOWN_ACTION', 2);
  });

  test('a database with a newer schema is a structured INTERNAL error (exit 1) that says so, and is left as it was', async () => {
    const { db } = sandbox();
    const env = await envFor(db, 'alice');
    const writable = new Database(db);
    writable.pragma('user_version = 999');
    writable.close();
    const run = await cli(['calendar', 'create'], env, JSON.stringify({ title: 'x', start_at: '2026-04-21T10:00:00Z', end_at: '2026-04-21T11:00:00Z' }));
    const error = assertFailure(run, 'INTERNAL', 1);
    assert.match(error.message, /the database cannot be used: .*schema is at version 999, newer than this toolgate knows/);
    assert.equal(run.stderr, '', 'no crash report: the failure is the document');
    assert.equal(withDb(db, (d) => d.pragma('user_version', { simple: true })), 999);
    assert.equal(countEvents(db), 0);
  });

  test('a missing module or method is a usage error (exit 2) naming no action', async () => {
    const { db } = sandbox();
    const env = await envFor(db, 'alice');
    const none = await cli([], env);
    assertFailure(none, 'INVALID_ACTION_INPUT', 2);
    assert.equal(none.doc.module, null);
    assert.equal(none.doc.method, null);
    const moduleOnly = await cli(['calendar'], env);
    assertFailure(moduleOnly, 'INVALID_ACTION_INPUT', 2);
    assert.equal(moduleOnly.doc.module, 'calendar');
    assert.equal(moduleOnly.doc.method, null);
    assertFailure(await cli(['calendar', '--mode', 'day'], env), 'INVALID_ACTION_INPUT', 2);
  });

  // ------------------------------------------------------------ 3: credential

  describe('UNAUTHENTICATED (exit 3)', { concurrency: 3 }, () => {
    const now = () => Math.floor(Date.now() / 1000);
    const read = readDay('2026-04-21', 'UTC');

    async function expectRefused(args: readonly string[], env: Env, stdin = ''): Promise<void> {
      const run = await cli(args, env, stdin);
      assertFailure(run, 'UNAUTHENTICATED', 3);
      assertNoLeak(run, env.PROJECT_CLI_CREDENTIAL);
    }

    test('no credential in the environment', async () => {
      const { db } = sandbox();
      await expectRefused(read, { PROJECT_CLI_VERIFY_KEY: TEST_VERIFY_KEY_JSON, TOOLGATE_DB: db });
    });

    test('an expired credential', async () => {
      const { db } = sandbox();
      await expectRefused(read, await envFor(db, 'alice', { iat: now() - 400, exp: now() - 100 }));
    });

    test('a credential signed by another key', async () => {
      const { db } = sandbox();
      const other = await generateTestKeyPair();
      await expectRefused(read, await envFor(db, 'alice', { key: other }));
    });

    test('a credential for another audience', async () => {
      const { db } = sandbox();
      await expectRefused(read, await envFor(db, 'alice', { aud: 'toolgate' }));
    });

    test('a credential from another issuer', async () => {
      const { db } = sandbox();
      await expectRefused(read, await envFor(db, 'alice', { iss: 'someone-else' }));
    });

    test('a credential whose lifetime exceeds 10 minutes', async () => {
      const { db } = sandbox();
      await expectRefused(read, await envFor(db, 'alice', { lifetimeS: 601 }));
    });

    test('a credential whose lifetime is under 5 minutes', async () => {
      const { db } = sandbox();
      await expectRefused(read, await envFor(db, 'alice', { lifetimeS: 60 }));
    });

    test('a credential with a wildcard action', async () => {
      const { db } = sandbox();
      await expectRefused(read, await envFor(db, 'alice', { actions: ['calendar.*'] }));
    });

    test('a user bearer token (HS256) instead of a controlled credential', async () => {
      const { db } = sandbox();
      const bearer = await mintBearer('alice');
      await expectRefused(read, { PROJECT_CLI_CREDENTIAL: bearer, PROJECT_CLI_VERIFY_KEY: TEST_VERIFY_KEY_JSON, TOOLGATE_DB: db });
    });

    test('no key recorded in the database, even with the verify key supplied', async () => {
      const { db } = sandbox();
      const token = await mintCredential({ sub: 'alice', actions: ALL_ACTIONS });
      await expectRefused(read, { PROJECT_CLI_CREDENTIAL: token, PROJECT_CLI_VERIFY_KEY: TEST_VERIFY_KEY_JSON, TOOLGATE_DB: db });
    });

    test('an unreadable PROJECT_CLI_VERIFY_KEY_FILE', async () => {
      const { dir, db } = sandbox();
      const { PROJECT_CLI_VERIFY_KEY: _k, ...env } = await envFor(db, 'alice');
      await expectRefused(read, { ...env, PROJECT_CLI_VERIFY_KEY_FILE: join(dir, 'missing.jwk') });
    });

    test('a private JWK given as the verify key', async () => {
      const { db } = sandbox();
      const env = await envFor(db, 'alice');
      await expectRefused(read, { ...env, PROJECT_CLI_VERIFY_KEY: JSON.stringify(TEST_KEY_PAIR.privateJwk) });
    });

    test('a verify key that is not JWK JSON', async () => {
      const { db } = sandbox();
      const env = await envFor(db, 'alice');
      await expectRefused(read, { ...env, PROJECT_CLI_VERIFY_KEY: 'not json' });
    });

    test('a credential offered by --credential, even with a valid one in the environment', async () => {
      const { db } = sandbox();
      const env = await envFor(db, 'alice');
      await expectRefused([...read, '--credential', env.PROJECT_CLI_CREDENTIAL!], env);
    });

    test('a credential offered by --token=…, even with a valid one in the environment', async () => {
      const { db } = sandbox();
      const env = await envFor(db, 'alice');
      await expectRefused([...read, `--token=${env.PROJECT_CLI_CREDENTIAL!}`], env);
    });

    test('a credential field in the stdin input, even with a valid one in the environment', async () => {
      const { db } = sandbox();
      const env = await envFor(db, 'alice');
      await expectRefused(['calendar', 'read'], env, JSON.stringify({ mode: 'day', date: '2026-04-21', credential: env.PROJECT_CLI_CREDENTIAL }));
    });

    test('a garbage credential', async () => {
      const { db } = sandbox();
      const env = await envFor(db, 'alice');
      await expectRefused(read, { ...env, PROJECT_CLI_CREDENTIAL: 'not-a-jwt' });
    });
  });

  // ------------------------------------------------------------ 4: not permitted

  test('a credential that does not list the action is ACTION_NOT_ALLOWED (exit 4) and writes nothing', async () => {
    const { db } = sandbox();
    const env = await envFor(db, 'alice', { actions: ['calendar.read'] });
    const denied = assertFailure(await cli(['calendar', 'create', ...STANDUP], env), 'ACTION_NOT_ALLOWED', 4);
    assert.deepEqual(denied.allowed_actions, ['calendar.read'], 'names what the credential permits');
    assertOk(await cli(readDay('2026-04-21', 'UTC'), env), 'calendar', 'read');
    assert.equal(countEvents(db), 0);
  });

  test('an invitee who accepted may see but not update the event: FORBIDDEN (exit 4)', async () => {
    const { db } = sandbox();
    const { bob, eventId, inviteId } = await aliceSharesWithBob(db);
    // A pending invite does not yet make the event visible.
    assertFailure(await cli(['calendar', 'read', '--mode', 'event', '--event-id', eventId], bob), 'NOT_FOUND', 5);
    const accepted = assertOk(await cli(['calendar', 'accept_invite', '--invite-id', inviteId], bob), 'calendar', 'accept_invite');
    assert.deepEqual(accepted.invite, { invite_id: inviteId, event_id: eventId, status: 'accepted' });
    const seen = assertOk(await cli(['calendar', 'read', '--mode', 'event', '--event-id', eventId], bob), 'calendar', 'read');
    assert.equal(seen.items[0].owner_id, 'alice');
    assertFailure(await cli(['calendar', 'update', '--event-id', eventId, '--title', 'Hijacked'], bob), 'FORBIDDEN', 4);
    assertFailure(await cli(['calendar', 'delete', '--event-id', eventId], bob), 'FORBIDDEN', 4);
    assert.equal(withDb(db, (d) => (d.prepare('SELECT title FROM events WHERE id = ?').get(eventId) as { title: string }).title), 'Standup');
  });

  // ------------------------------------------------------------ 5: not found

  test('reading an unknown event id is NOT_FOUND (exit 5)', async () => {
    const { db } = sandbox();
    const env = await envFor(db, 'alice');
    assertFailure(await cli(['calendar', 'read', '--mode', 'event', '--event-id', 'evt_does-not-exist'], env), 'NOT_FOUND', 5);
  });

  test("deleting someone else's unshared event is NOT_FOUND (exit 5), not FORBIDDEN, and leaves it", async () => {
    const { db } = sandbox();
    const bob = await envFor(db, 'bob');
    const event = await seedStandup(db);
    assertFailure(await cli(['calendar', 'delete', '--event-id', event.id], bob), 'NOT_FOUND', 5);
    assertFailure(await cli(['calendar', 'read', '--mode', 'event', '--event-id', event.id], bob), 'NOT_FOUND', 5);
    assert.equal(countEvents(db), 1);
  });

  // ------------------------------------------------------------ 6: conflict

  test('rejecting an invite already accepted is CONFLICT (exit 6)', async () => {
    const { db } = sandbox();
    const bob = await envFor(db, 'bob');
    // alice's event shared with bob, the invite pending (sharing through the CLI: the FORBIDDEN test above).
    const { invite_id: inviteId } = await seed(db, async (tx) => {
      await tx.users.ensure('alice');
      await tx.users.ensure('bob');
      const event = await tx.events.create('alice', STANDUP_FIELDS);
      return tx.invites.upsert(event.id, 'alice', 'bob');
    });
    assertOk(await cli(['calendar', 'accept_invite', '--invite-id', inviteId], bob), 'calendar', 'accept_invite');
    const error = assertFailure(await cli(['calendar', 'reject_invite', '--invite-id', inviteId], bob), 'CONFLICT', 6);
    assert.equal(error.status, 'accepted');
  });

  // ------------------------------------------------------------ idempotency

  describe('a credential bound to one tool call', () => {
    const input = { title: 'Once', start_at: '2026-04-21T10:00:00Z', end_at: '2026-04-21T11:00:00Z' };
    const bind = (thread_id: string, tool_call_id: string, args: unknown) => ({ thread_id, tool_call_id, args_sha256: argsSha256(args) });

    test('running the same call twice answers the same bytes and creates one event', async () => {
      const { db } = sandbox();
      const call = bind('thread-1', 'call-1', { module: 'calendar', method: 'create', input });
      const env = await envFor(db, 'alice', { call });
      const first = await cli(['calendar', 'create'], env, JSON.stringify(input));
      assertOk(first, 'calendar', 'create');
      // Same call, a freshly minted credential, keys in another order on stdin.
      const again = await cli(['calendar', 'create'], await envFor(db, 'alice', { call }), JSON.stringify({ end_at: input.end_at, title: input.title, start_at: input.start_at }));
      assert.equal(again.exitCode, 0);
      assert.equal(again.stdout, first.stdout, 'the replay is byte-identical');
      assert.equal(countEvents(db), 1);
      withDb(db, (d) => {
        const rows = d.prepare('SELECT * FROM tool_calls').all() as Array<{ thread_id: string; tool_call_id: string; outcome: string; exit_code: number; user_id: string }>;
        assert.equal(rows.length, 1);
        assert.equal(rows[0]!.outcome, first.stdout.trimEnd());
        assert.equal(rows[0]!.exit_code, 0);
        assert.equal(rows[0]!.user_id, 'alice');
      });
    });

    test('the same call claim with other input is refused as UNAUTHENTICATED (exit 3)', async () => {
      const { db } = sandbox();
      const env = await envFor(db, 'alice', { call: bind('thread-1', 'call-1', { module: 'calendar', method: 'create', input }) });
      assertFailure(await cli(['calendar', 'create'], env, JSON.stringify({ ...input, title: 'Twice' })), 'UNAUTHENTICATED', 3);
      // A flag that changes the input breaks the binding too.
      assertFailure(await cli(['calendar', 'create', '--title', 'Twice'], env, JSON.stringify(input)), 'UNAUTHENTICATED', 3);
      assert.equal(countEvents(db), 0);
    });

    test('a tool_call_id already recorded with other arguments is DUPLICATE_TOOL_CALL_ID (exit 6)', async () => {
      const { db } = sandbox();
      const first = await envFor(db, 'alice', { call: bind('thread-1', 'call-1', { module: 'calendar', method: 'create', input }) });
      assertOk(await cli(['calendar', 'create'], first, JSON.stringify(input)), 'calendar', 'create');
      const other = { ...input, title: 'Other' };
      const second = await envFor(db, 'alice', { call: bind('thread-1', 'call-1', { module: 'calendar', method: 'create', input: other }) });
      assertFailure(await cli(['calendar', 'create'], second, JSON.stringify(other)), 'DUPLICATE_TOOL_CALL_ID', 6);
      assert.equal(countEvents(db), 1);
      // The same tool_call_id in another thread is another call.
      const elsewhere = await envFor(db, 'alice', { call: bind('thread-2', 'call-1', { module: 'calendar', method: 'create', input: other }) });
      assertOk(await cli(['calendar', 'create'], elsewhere, JSON.stringify(other)), 'calendar', 'create');
      assert.equal(countEvents(db), 2);
    });
  });

  // ------------------------------------------------------------ credential time

  test(
    'a credential whose iat lies in the future is refused (its real lifetime is not 5–10 minutes)',
    async () => {
      const { db } = sandbox();
      const iat = Math.floor(Date.now() / 1000) + 365 * 24 * 3600;
      const run = await cli(readDay('2026-04-21', 'UTC'), await envFor(db, 'alice', { iat, exp: iat + 300 }));
      assertFailure(run, 'UNAUTHENTICATED', 3);
    },
  );
});
