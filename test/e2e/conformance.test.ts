/**
 * The conformance runner, run as a host author would run it: against toolgate over stdio (all
 * checks pass), and against deliberately broken daemons (the defect is named). Over WebSocket:
 * conformance-ws.test.ts, a file of its own so the two run side by side.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { REPO_ROOT, TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { TEST_BEARER_SECRET, mintBearer as userToken } from '../helpers/tokens.js';
import { assertAllPassed, conformance, quote } from '../helpers/conformance-run.js';

const FAKE = join(REPO_ROOT, 'dist', 'test', 'fixtures', 'broken-daemon.js');

describe('toolgate conformance', () => {
  for (const executor of ['subprocess', 'inprocess'] as const) {
    test(`passes against toolgate over stdio (two users, ${executor} executor)`, async () => {
      const db = join(tempDir(), 'toolgate.db');
      const [a, b] = await Promise.all([userToken('conf-alice'), userToken('conf-bob')]);
      const cmd = `${quote(process.execPath)} ${quote(TOOLGATE_BIN)} serve --stdio --executor ${executor} --db ${quote(db)}`;
      const result = await conformance(['--stdio', cmd, '--token', a, '--token-b', b, '--secret', TEST_BEARER_SECRET]);
      // Skipped: the second-connection subscription check (stdio has one connection), --agent's and the three of --ask-agent.
      assertAllPassed(result, true);
      const skipped = result.lines.filter((l) => l.startsWith('skip'));
      assert.equal(skipped.length, 5, skipped.join('\n'));
      assert.ok(skipped.some((l) => /^skip .*another connection receives/.test(l)));
      assert.ok(skipped.some((l) => /^skip .*needs --agent NAME/.test(l)));
      assert.equal(skipped.filter((l) => /^skip .*approval: .*needs --ask-agent NAME/.test(l)).length, 3, skipped.join('\n'));
      // Subscriptions are checked over stdio too.
      assert.ok(result.lines.some((l) => /^ok .*thread\/subscribe on the calling connection/.test(l)));
    });
  }

  const broken: Array<[mode: string, check: RegExp, reason: RegExp]> = [
    ['response-first', /^FAIL .*notifications reach the caller before the response/, /arrived after the response/],
    ['history-text', /^FAIL .*context view: the tool message is byte-identical/, /history content vs tool\/invoke text: differs at character \d+/],
    ['missing-field', /^FAIL .*schemas: every message received matches schemas\//, /session\/open result does not match SessionOpenResult: .*user_id/],
  ];
  for (const [mode, check, reason] of broken) {
    test(`fails with a readable report against a daemon whose defect is: ${mode}`, async () => {
      const token = await userToken('fake-user');
      const result = await conformance(['--stdio', `${quote(process.execPath)} ${quote(FAKE)} --fake ${mode}`, '--token', token, '--timeout-ms', '10000'], {
        FAKE_TOKEN: token,
      });
      const report = result.lines.join('\n');
      assert.equal(result.code, 1, report);
      const at = result.lines.findIndex((l) => check.test(l));
      assert.ok(at >= 0, `no FAIL line for the defect:\n${report}`);
      // The reason is written indented under the FAIL line.
      const details = result.lines.slice(at + 1).filter((_, i, all) => all.slice(0, i + 1).every((l) => l.startsWith('   ')));
      assert.match(details.join('\n'), reason, report);
      assert.match(result.lines.at(-1)!, /^\d+ passed, [1-9]\d* failed$/);
    });
  }

  test('--help says what it does, its flags and an example; bad usage exits 2', async () => {
    const help = await conformance(['--help']);
    assert.equal(help.code, 0);
    const text = help.lines.join('\n');
    for (const word of ['--stdio', '--ws', '--token', '--token-b', '--secret', '--agent', '--ask-agent', 'example', 'your own implementation']) assert.ok(text.includes(word), word);
    const bad = await conformance(['--token', 'x']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /exactly one of --stdio/);
  });
});
