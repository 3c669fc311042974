/**
 * The CLI router in-process: runCli as a function (argv, env map, stdin in;
 * one JSON document and an exit code out), flag parsing and coercion, day
 * bounds across time zones and DST, and canonical JSON.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { closeCliStores, runCli, type CliInvocation } from '../../../src/cli-router/run-cli.js';
import { UsageError, flagKinds, parseFlags } from '../../../src/cli-router/argv.js';
import { dayBounds, isTimeZone } from '../../../src/cli-router/time.js';
import { argsSha256, canonicalJson } from '../../../src/codec/canonical-json.js';
import { ALL_ACTIONS, TEST_VERIFY_KEY_JSON, generateTestKeyPair, mintCredential, recordTrustedKey } from '../../helpers/credentials.js';
import { tempDir } from '../../helpers/repo.js';

const dir = tempDir('toolgate-cli-unit-');
const DB = join(dir, 'toolgate.db');
await recordTrustedKey(DB);
after(async () => {
  await closeCliStores();
  rmSync(dir, { recursive: true, force: true });
});

async function envFor(sub: string, actions: readonly string[] = ALL_ACTIONS): Promise<Record<string, string>> {
  return { PROJECT_CLI_CREDENTIAL: await mintCredential({ sub, actions }), PROJECT_CLI_VERIFY_KEY: TEST_VERIFY_KEY_JSON, TOOLGATE_DB: DB };
}

async function run(inv: Partial<CliInvocation> & Pick<CliInvocation, 'argv' | 'env'>) {
  const outcome = await runCli({ stdin: null, ...inv });
  assert.ok(!outcome.stdout.includes('\n'), 'one line');
  const doc = JSON.parse(outcome.stdout) as { ok: boolean; module: string | null; method: string | null; data?: any; error?: any };
  assert.equal(outcome.stdout, JSON.stringify(doc));
  return { ...outcome, doc };
}

// ------------------------------------------------------------------ runCli

describe('runCli in-process', () => {
  test('creates then reads an event, with flags and with stdin, exit 0', async () => {
    const env = await envFor('unit-alice');
    const created = await run({
      argv: ['calendar', 'create', '--title', 'Unit', '--start-at', '2026-05-01T09:00:00+02:00', '--end-at', '2026-05-01T10:00:00+02:00'],
      env,
    });
    assert.equal(created.exitCode, 0, created.stdout);
    assert.deepEqual(Object.keys(created.doc), ['ok', 'module', 'method', 'data']);
    assert.equal(created.doc.data.event.title, 'Unit');

    const read = await run({ argv: ['calendar', 'read'], env, stdin: JSON.stringify({ mode: 'day', date: '2026-05-01', timezone: 'Europe/Berlin' }) });
    assert.equal(read.exitCode, 0);
    assert.deepEqual(read.doc.data, { items: [created.doc.data.event], count: 1, next_cursor: null });
  });

  test('no stdin (a terminal) is an empty input, not an error', async () => {
    const result = await run({ argv: ['memory', 'read'], env: await envFor('unit-carol'), stdin: null });
    assert.equal(result.exitCode, 0, result.stdout);
    assert.deepEqual(result.doc.data, { items: [], count: 0, next_cursor: null });
  });

  test('the verify key file is read through the injected reader', async () => {
    const { PROJECT_CLI_VERIFY_KEY: _k, ...env } = await envFor('unit-alice');
    const seen: string[] = [];
    const ok = await run({
      argv: ['memory', 'read'],
      env: { ...env, PROJECT_CLI_VERIFY_KEY_FILE: '/keys/verify.jwk' },
      readFile: (p) => (seen.push(p), TEST_VERIFY_KEY_JSON),
    });
    assert.equal(ok.exitCode, 0, ok.stdout);
    assert.deepEqual(seen, ['/keys/verify.jwk']);

    const unreadable = await run({
      argv: ['memory', 'read'],
      env: { ...env, PROJECT_CLI_VERIFY_KEY_FILE: '/keys/missing.jwk' },
      readFile: () => {
        throw new Error('ENOENT');
      },
    });
    assert.equal(unreadable.exitCode, 3);
    assert.equal(unreadable.doc.error.code, 'UNAUTHENTICATED');
  });

  test('a credential from another key is UNAUTHENTICATED (exit 3) and the message never echoes the token', async () => {
    const other = await generateTestKeyPair();
    const token = await mintCredential({ sub: 'unit-alice', actions: ALL_ACTIONS, key: other });
    const result = await run({ argv: ['memory', 'read'], env: { PROJECT_CLI_CREDENTIAL: token, PROJECT_CLI_VERIFY_KEY: TEST_VERIFY_KEY_JSON, TOOLGATE_DB: DB } });
    assert.equal(result.exitCode, 3);
    assert.equal(result.doc.error.code, 'UNAUTHENTICATED');
    assert.ok(!result.stdout.includes(token));
  });

  test('an action missing from the credential is ACTION_NOT_ALLOWED (exit 4)', async () => {
    const result = await run({ argv: ['memory', 'forget', '--key', 'k'], env: await envFor('unit-alice', ['memory.read']) });
    assert.equal(result.exitCode, 4);
    assert.equal(result.doc.error.code, 'ACTION_NOT_ALLOWED');
  });

  test('a usage error names neither module nor method when argv is empty', async () => {
    const result = await run({ argv: [], env: {} });
    assert.equal(result.exitCode, 2);
    assert.deepEqual({ module: result.doc.module, method: result.doc.method, code: result.doc.error.code }, {
      module: null,
      method: null,
      code: 'INVALID_ACTION_INPUT',
    });
  });

  test('no database configured is INTERNAL (exit 1)', async () => {
    const { TOOLGATE_DB: _db, ...env } = await envFor('unit-alice');
    const result = await run({ argv: ['memory', 'read'], env });
    assert.equal(result.exitCode, 1);
    assert.equal(result.doc.error.code, 'INTERNAL');
  });
});

// ------------------------------------------------------------------ flags

describe('flagKinds / parseFlags', () => {
  const schema = {
    anyOf: [
      {
        type: 'object',
        properties: {
          start_at: { type: 'string' },
          limit: { type: 'integer' },
          ratio: { type: ['number', 'null'] },
          user_ids: { type: 'array', items: { type: 'string' } },
          filter: { type: 'object' },
          all_day: { type: 'boolean' },
        },
      },
      { oneOf: [{ type: 'object', properties: { note: { anyOf: [{ type: 'string' }, { type: 'null' }] } } }] },
    ],
  };
  const kinds = flagKinds(schema);

  test('flagKinds reads top-level property types across anyOf/oneOf branches, skipping null', () => {
    assert.deepEqual(Object.fromEntries(kinds), {
      start_at: 'string',
      limit: 'integer',
      ratio: 'number',
      user_ids: 'array',
      filter: 'object',
      all_day: 'boolean',
      note: 'string',
    });
  });

  test('kebab-case flags become snake_case fields; absent flags stay absent', () => {
    assert.deepEqual(parseFlags(['--start-at', '2026-04-21T10:00:00Z'], kinds), { start_at: '2026-04-21T10:00:00Z' });
    assert.deepEqual(parseFlags([], kinds), {});
  });

  test('numbers are coerced; a non-number is left as a string for validation to refuse', () => {
    assert.deepEqual(parseFlags(['--limit', '25', '--ratio', '0.5'], kinds), { limit: 25, ratio: 0.5 });
    assert.deepEqual(parseFlags(['--limit', 'many'], kinds), { limit: 'many' });
    assert.deepEqual(parseFlags(['--limit', ''], kinds), { limit: '' });
  });

  test('arrays come from commas, repeated flags, or a JSON array', () => {
    assert.deepEqual(parseFlags(['--user-ids', 'bob,carol'], kinds), { user_ids: ['bob', 'carol'] });
    assert.deepEqual(parseFlags(['--user-ids', 'bob', '--user-ids', 'carol'], kinds), { user_ids: ['bob', 'carol'] });
    assert.deepEqual(parseFlags(['--user-ids', 'bob, carol,', '--user-ids', 'dave'], kinds), { user_ids: ['bob', 'carol', 'dave'] });
    assert.deepEqual(parseFlags(['--user-ids', '["bob","carol, jr"]'], kinds), { user_ids: ['bob', 'carol, jr'] });
  });

  test('objects come from JSON; invalid JSON is left as a string', () => {
    assert.deepEqual(parseFlags(['--filter', '{"a":{"b":[1,2]}}'], kinds), { filter: { a: { b: [1, 2] } } });
    assert.deepEqual(parseFlags(['--filter', '{oops'], kinds), { filter: '{oops' });
  });

  test('booleans come from true/false', () => {
    assert.deepEqual(parseFlags(['--all-day', 'true'], kinds), { all_day: true });
    assert.deepEqual(parseFlags(['--all-day', 'false'], kinds), { all_day: false });
  });

  test('a repeated scalar flag keeps its last value', () => {
    assert.deepEqual(parseFlags(['--start-at', 'a', '--start-at', 'b'], kinds), { start_at: 'b' });
  });

  test('values are data: shell metacharacters pass through untouched', () => {
    const nasty = '$(rm -rf /); `id` | cat && echo $HOME';
    assert.deepEqual(parseFlags([`--start-at=${nasty}`], kinds), { start_at: nasty });
  });

  test('unknown flags, snake_case flags and positionals are usage errors', () => {
    assert.throws(() => parseFlags(['--colour', 'red'], kinds), UsageError);
    assert.throws(() => parseFlags(['--start_at', 'x'], kinds), UsageError);
    assert.throws(() => parseFlags(['stray'], kinds), UsageError);
    assert.throws(() => parseFlags(['--start-at'], kinds), UsageError, 'a flag without its value');
  });
});

// ------------------------------------------------------------------ time

describe('dayBounds / isTimeZone', () => {
  const iso = (ms: number) => new Date(ms).toISOString();
  const hours = (b: { startMs: number; endMs: number }) => (b.endMs - b.startMs) / 3_600_000;

  test('UTC days run midnight to midnight', () => {
    const b = dayBounds('2026-04-21', 'UTC');
    assert.equal(iso(b.startMs), '2026-04-21T00:00:00.000Z');
    assert.equal(iso(b.endMs), '2026-04-22T00:00:00.000Z');
  });

  test('Asia/Shanghai (+08, no DST) days start at 16:00 UTC the day before', () => {
    const b = dayBounds('2026-04-21', 'Asia/Shanghai');
    assert.equal(iso(b.startMs), '2026-04-20T16:00:00.000Z');
    assert.equal(iso(b.endMs), '2026-04-21T16:00:00.000Z');
  });

  test('the last day of a month and of a year ends at the next month and year', () => {
    assert.equal(iso(dayBounds('2026-12-31', 'Asia/Shanghai').endMs), '2026-12-31T16:00:00.000Z');
    assert.equal(iso(dayBounds('2028-02-29', 'UTC').endMs), '2028-03-01T00:00:00.000Z');
  });

  test('America/New_York on the spring-forward day is 23 hours long', () => {
    const b = dayBounds('2026-03-08', 'America/New_York');
    assert.equal(iso(b.startMs), '2026-03-08T05:00:00.000Z'); // 00:00 EST
    assert.equal(iso(b.endMs), '2026-03-09T04:00:00.000Z'); // 00:00 EDT
    assert.equal(hours(b), 23);
  });

  test('America/New_York on the fall-back day is 25 hours long', () => {
    const b = dayBounds('2026-11-01', 'America/New_York');
    assert.equal(iso(b.startMs), '2026-11-01T04:00:00.000Z'); // 00:00 EDT
    assert.equal(iso(b.endMs), '2026-11-02T05:00:00.000Z'); // 00:00 EST
    assert.equal(hours(b), 25);
  });

  test('a half-hour DST shift (Australia/Lord_Howe) gives a 24.5-hour day', () => {
    assert.equal(hours(dayBounds('2026-04-05', 'Australia/Lord_Howe')), 24.5);
  });

  test(
    'where DST skips midnight (America/Havana), the day starts at the first instant that exists, 01:00',
    () => {
      // 2026-03-08 00:00 CST does not exist in Havana: 04:59:59Z is 2026-03-07 23:59:59 -05, 05:00Z is 01:00 -04.
      const b = dayBounds('2026-03-08', 'America/Havana');
      assert.equal(iso(b.startMs), '2026-03-08T05:00:00.000Z');
      assert.equal(hours(b), 23);
      assert.equal(hours(dayBounds('2026-03-07', 'America/Havana')), 24);
    },
  );

  test('isTimeZone accepts IANA names and refuses anything else', () => {
    for (const z of ['UTC', 'Asia/Shanghai', 'America/New_York', 'Europe/Berlin']) assert.equal(isTimeZone(z), true, z);
    for (const z of ['Mars/Olympus', '', 'Asia/Shang hai', 'Not a zone']) assert.equal(isTimeZone(z), false, z);
  });
});

// ------------------------------------------------------------------ canonical JSON

describe('canonicalJson / argsSha256', () => {
  test('object key order does not matter, at any depth', () => {
    const a = { module: 'calendar', method: 'create', input: { title: 'T', items: [{ b: 1, a: { y: 2, x: 1 } }] } };
    const b = { input: { items: [{ a: { x: 1, y: 2 }, b: 1 }], title: 'T' }, method: 'create', module: 'calendar' };
    assert.equal(canonicalJson(a), canonicalJson(b));
    assert.equal(canonicalJson(b), '{"input":{"items":[{"a":{"x":1,"y":2},"b":1}],"title":"T"},"method":"create","module":"calendar"}');
    assert.equal(argsSha256(a), argsSha256(b));
    assert.match(argsSha256(a), /^[0-9a-f]{64}$/);
  });

  test('array order and values still matter', () => {
    assert.notEqual(canonicalJson({ a: [1, 2] }), canonicalJson({ a: [2, 1] }));
    assert.notEqual(argsSha256({ a: '1' }), argsSha256({ a: 1 }));
  });
});
