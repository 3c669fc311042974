/**
 * The conformance runner, run as a host author would run it: against toolgate over stdio (all
 * checks pass), and against deliberately broken daemons (the defect is named). Over WebSocket:
 * conformance-ws.test.ts, a file of its own so the two run side by side.
 *
 * One run is the command as a user types it (`toolgate conformance --stdio "toolgate serve
 * --stdio"`, both spawned, the binary's default subprocess executor); the in-process executor's run
 * is the same runner against the daemon in this process, over the real stdio transport on an
 * in-memory pair (test/helpers/in-process.ts). One broken daemon goes through the command (its
 * exit code 1), the others through the runner in this process. The cases run side by side.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { streamTransport, stdioTransport } from '../../src/conformance/transport.js';
import { REPO_ROOT, TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { TEST_BEARER_SECRET, mintBearer as userToken } from '../helpers/tokens.js';
import { startInProcess } from '../helpers/in-process.js';
import { assertAllPassed, conformance, quote, runInProcess, type ConformanceResult } from '../helpers/conformance-run.js';

const FAKE = join(REPO_ROOT, 'dist', 'test', 'fixtures', 'broken-daemon.js');

/** What a stdio run without --agent and --ask-agent reports: every check passed, five skipped. */
function assertStdioRun(result: ConformanceResult, daemonLog = ''): void {
  // Skipped: the second-connection subscription check (stdio has one connection), --agent's and the three of --ask-agent.
  assertAllPassed(result, true, daemonLog);
  const skipped = result.lines.filter((l) => l.startsWith('skip'));
  assert.equal(skipped.length, 5, skipped.join('\n'));
  assert.ok(skipped.some((l) => /^skip .*another connection receives/.test(l)));
  assert.ok(skipped.some((l) => /^skip .*needs --agent NAME/.test(l)));
  assert.equal(skipped.filter((l) => /^skip .*approval: .*needs --ask-agent NAME/.test(l)).length, 3, skipped.join('\n'));
  // Subscriptions are checked over stdio too.
  assert.ok(result.lines.some((l) => /^ok .*thread\/subscribe on the calling connection/.test(l)));
}

describe('toolgate conformance', { concurrency: true }, () => {
  test('passes against toolgate over stdio (two users, subprocess executor), both spawned as a user runs them', async () => {
    const db = join(tempDir(), 'toolgate.db');
    const [a, b] = await Promise.all([userToken('conf-alice'), userToken('conf-bob')]);
    const cmd = `${quote(process.execPath)} ${quote(TOOLGATE_BIN)} serve --stdio --executor subprocess --db ${quote(db)}`;
    assertStdioRun(await conformance(['--stdio', cmd, '--token', a, '--token-b', b, '--secret', TEST_BEARER_SECRET]));
  });

  test('passes against toolgate over stdio (two users, inprocess executor), the daemon in this process', async () => {
    const host = await startInProcess({ transport: 'stdio', executor: 'inprocess' });
    try {
      const [a, b] = await Promise.all([userToken('conf-alice'), userToken('conf-bob')]);
      const result = await runInProcess({
        open: async () => {
          const pair = host.openStdio();
          return streamTransport(pair.fromDaemon, pair.toDaemon, 'stdio: the daemon in this process');
        },
        multiConnection: false,
        tokenA: a,
        tokenB: b,
        secret: TEST_BEARER_SECRET,
      });
      assertStdioRun(result, host.stderr());
    } finally {
      await host.stop();
    }
  });

  const broken: Array<[mode: string, check: RegExp, reason: RegExp]> = [
    ['response-first', /^FAIL .*notifications reach the caller before the response/, /arrived after the response/],
    ['history-text', /^FAIL .*context view: the tool message is byte-identical/, /history content vs tool\/invoke text: differs at character \d+/],
    ['missing-field', /^FAIL .*schemas: every message received matches schemas\//, /session\/open result does not match SessionOpenResult: .*user_id/],
  ];
  for (const [i, [mode, check, reason]] of broken.entries()) {
    // The first through the command (its exit code), the others through its runner here.
    const how = i === 0 ? 'the command' : 'the runner in this process';
    test(`fails with a readable report against a daemon whose defect is: ${mode} (${how})`, async () => {
      const token = await userToken('fake-user');
      const argv = [process.execPath, FAKE, '--fake', mode];
      const result =
        i === 0
          ? await conformance(['--stdio', argv.map(quote).join(' '), '--token', token, '--timeout-ms', '10000'], { FAKE_TOKEN: token })
          : await runInProcess({
              open: async () => stdioTransport(argv, { PATH: process.env.PATH ?? '', FAKE_TOKEN: token }),
              multiConnection: false,
              tokenA: token,
              timeoutMs: 10_000,
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
    const [help, bad] = await Promise.all([conformance(['--help']), conformance(['--token', 'stand-in-bearer-token-0123456789'])]);
    assert.equal(help.code, 0);
    const text = help.lines.join('\n');
    for (const word of ['--stdio', '--ws', '--token', '--token-b', '--secret', '--agent', '--ask-agent', 'example', 'your own implementation']) assert.ok(text.includes(word), word);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /exactly one of --stdio/);
  });
});
