/**
 * The conformance runner against toolgate over WebSocket, every check applicable (a second
 * connection, a narrower and an asking agent profile), on both executors. A file of its own,
 * beside conformance.test.ts (stdio, broken daemons), so the two run side by side.
 *
 * The subprocess executor's run is the command as a user runs it against a spawned `serve --ws`;
 * the in-process executor's is the same runner in this process against the daemon in this process,
 * on the binary's own WebSocket listener (test/helpers/in-process.ts). The two run side by side.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { wsTransport } from '../../src/conformance/transport.js';
import { tempDir } from '../helpers/repo.js';
import { TEST_BEARER_SECRET, mintBearer as userToken } from '../helpers/tokens.js';
import { startHost } from '../helpers/host.js';
import { startInProcess } from '../helpers/in-process.js';
import { assertAllPassed, conformance, runInProcess, type ConformanceResult } from '../helpers/conformance-run.js';

/** A config with the default profile, a narrower one (`reader`) and one whose memory.forget asks (`asker`). */
function writeConfig(): string {
  const config = join(tempDir(), 'toolgate.config.json');
  writeFileSync(config, JSON.stringify({
      agents: {
        default: { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.read', 'memory.*'] },
        reader: { enabled_skills: ['calendar'], allowed_actions: ['calendar.read'] },
        asker: { enabled_skills: ['memory'], allowed_actions: ['memory.*'], approval: { ask: ['memory.forget'] } },
      },
    }),);
  return config;
}

function assertWsRun(result: ConformanceResult, daemonLog: string): void {
  assertAllPassed(result, false, daemonLog);
  assert.equal(result.lines.filter((l) => /^ok .*approval: /.test(l)).length, 3, result.lines.join('\n'));
}

describe('toolgate conformance over WebSocket', { concurrency: true }, () => {
  test('passes against toolgate over WebSocket, every check applicable (a narrower and an asking agent profile configured, subprocess executor), both spawned as a user runs them', async () => {
    const host = await startHost({ transport: 'ws', args: ['--config', writeConfig(), '--executor', 'subprocess'] });
    try {
      const [a, b] = await Promise.all([userToken('conf-alice'), userToken('conf-bob')]);
      const result = await conformance(['--ws', `ws://127.0.0.1:${host.port}/rpc`, '--token', a, '--token-b', b, '--secret', TEST_BEARER_SECRET, '--agent', 'reader', '--ask-agent', 'asker']);
      assertWsRun(result, host.stderr());
    } finally {
      await host.stop();
    }
  });

  test('passes against toolgate over WebSocket, every check applicable (a narrower and an asking agent profile configured, inprocess executor), the daemon in this process', async () => {
    const host = await startInProcess({ transport: 'ws', executor: 'inprocess', args: ['--config', writeConfig()] });
    try {
      const [a, b] = await Promise.all([userToken('conf-alice'), userToken('conf-bob')]);
      const url = `ws://127.0.0.1:${host.port}/rpc`;
      const result = await runInProcess({
        open: () => wsTransport(url),
        multiConnection: true,
        tokenA: a,
        tokenB: b,
        secret: TEST_BEARER_SECRET,
        agent: 'reader',
        askAgent: 'asker',
      });
      assertWsRun(result, host.stderr());
    } finally {
      await host.stop();
    }
  });
});
