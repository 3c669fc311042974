/**
 * `serve` listens for SIGHUP from its first line, so a reload sent while the
 * daemon starts never ends it (config-reload.test.ts). A start that fails
 * must take that listener away again: a process that goes on (an embedding
 * host, a supervisor retrying in process) must not keep swallowing SIGHUP.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { serve } from '../../../src/app/serve.js';
import { serveOptionsOf } from '../../../src/app/cli.js';
import { ConfigError } from '../../../src/config/config-error.js';
import { tempDir } from '../../helpers/repo.js';

test('a serve whose start throws leaves no SIGHUP listener behind', async () => {
  const dir = tempDir();
  // serve --mcp without TOOLGATE_MCP_TOKEN: refused while the daemon is being built.
  const opts = serveOptionsOf(['--mcp', '--db', join(dir, 'toolgate.db')], { TOOLGATE_HOME: dir });
  assert.ok(opts);
  const before = process.listenerCount('SIGHUP');
  await assert.rejects(serve(opts), ConfigError);
  assert.equal(process.listenerCount('SIGHUP'), before);
});
