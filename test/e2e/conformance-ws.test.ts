/**
 * The conformance runner against toolgate over WebSocket, every check applicable (a second
 * connection, a narrower and an asking agent profile), on both executors. A file of its own,
 * beside conformance.test.ts (stdio, broken daemons), so the two run side by side.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/repo.js';
import { TEST_BEARER_SECRET, mintBearer as userToken } from '../helpers/tokens.js';
import { startHost } from '../helpers/host.js';
import { assertAllPassed, conformance } from '../helpers/conformance-run.js';

describe('toolgate conformance over WebSocket', () => {
  for (const executor of ['subprocess', 'inprocess'] as const) {
    test(`passes against toolgate over WebSocket, every check applicable (a narrower and an asking agent profile configured, ${executor} executor)`, async () => {
      const dir = tempDir();
      const config = join(dir, 'toolgate.config.json');
      writeFileSync(config, JSON.stringify({
          agents: {
            default: { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.read', 'memory.*'] },
            reader: { enabled_skills: ['calendar'], allowed_actions: ['calendar.read'] },
            asker: { enabled_skills: ['memory'], allowed_actions: ['memory.*'], approval: { ask: ['memory.forget'] } },
          },
        }),);
      const host = await startHost({ transport: 'ws', args: ['--config', config, '--executor', executor] });
      try {
        const [a, b] = await Promise.all([userToken('conf-alice'), userToken('conf-bob')]);
        const result = await conformance(['--ws', `ws://127.0.0.1:${host.port}/rpc`, '--token', a, '--token-b', b, '--secret', TEST_BEARER_SECRET, '--agent', 'reader', '--ask-agent', 'asker']);
        assertAllPassed(result, false, host.stderr());
        assert.equal(result.lines.filter((l) => /^ok .*approval: /.test(l)).length, 3, result.lines.join('\n'));
      } finally {
        await host.stop();
      }
    });
  }
});
