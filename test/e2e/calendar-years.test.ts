/**
 * `calendar.read` day mode for every year ISO-8601's YYYY allows: years
 * 0000–0099 were read as 1900–1999 (`Date.UTC`), so `0050-01-01` returned
 * the 1950 event and missed the year-50 one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_CLI_BIN, tempDir } from '../helpers/repo.js';
import { ALL_ACTIONS, mintCredential, recordTrustedKey } from '../helpers/credentials.js';
import { closeCliStores, runCli } from '../../src/cli-router/run-cli.js';

test('day bounds are right for years 0000–0099 and 9999, in any zone', async (t) => {
  const db = join(tempDir('toolgate-years-'), 'toolgate.db');
  await recordTrustedKey(db);
  const env = { PROJECT_CLI_CREDENTIAL: await mintCredential({ sub: 'alice', actions: ALL_ACTIONS }), TOOLGATE_DB: db };
  // The first call through the binary, the others through the same function it runs (runCli) in this process:
  // what is checked is the handler's day bounds, not the process boundary (test/e2e/project-cli.test.ts).
  let calls = 0;
  const cli = async (method: string, input: unknown) => {
    const r =
      calls++ === 0
        ? spawnSync(process.execPath, [PROJECT_CLI_BIN, 'calendar', method], { input: JSON.stringify(input), env, encoding: 'utf8' })
        : await runCli({ argv: ['calendar', method], env, stdin: JSON.stringify(input) }).then((o) => ({ stdout: o.stdout, status: o.exitCode }));
    const doc = JSON.parse(r.stdout) as { ok: boolean; data: any; error?: unknown };
    assert.equal(r.status, 0, r.stdout);
    return doc.data;
  };
  t.after(() => closeCliStores());
  const ids = new Map<string, string>();
  for (const [name, start, end] of [
    ['year-50', '0050-01-01T10:00:00Z', '0050-01-01T11:00:00Z'],
    ['year-1950', '1950-01-01T10:00:00Z', '1950-01-01T11:00:00Z'],
    ['year-0', '0000-01-01T02:00:00Z', '0000-01-01T03:00:00Z'],
    ['year-1900', '1900-01-01T02:00:00Z', '1900-01-01T03:00:00Z'],
    ['year-99-feb29', '0096-02-29T12:00:00Z', '0096-02-29T13:00:00Z'],
    ['year-9999', '9999-12-31T20:00:00Z', '9999-12-31T21:00:00Z'],
  ] as const) {
    ids.set(name, (await cli('create', { title: name, start_at: start, end_at: end })).event.id);
  }
  const day = async (date: string, timezone?: string) =>
    ((await cli('read', { mode: 'day', date, ...(timezone ? { timezone } : {}) })).items as Array<{ title: string }>).map((e) => e.title);
  assert.deepEqual(await day('0050-01-01'), ['year-50']);
  assert.deepEqual(await day('1950-01-01'), ['year-1950']);
  assert.deepEqual(await day('0000-01-01'), ['year-0']);
  assert.deepEqual(await day('0000-01-01', 'Asia/Shanghai'), ['year-0'], 'local midnight in year 0 (LMT +08:05:43)');
  assert.deepEqual(await day('0096-02-29'), ['year-99-feb29']);
  assert.deepEqual(await day('0049-12-31', 'America/New_York'), [], 'the year-50 event is 05:00 local on 0050-01-01');
  assert.deepEqual(await day('9999-12-31', 'UTC'), ['year-9999']);
  assert.deepEqual(await day('1900-01-01'), ['year-1900']);
});
