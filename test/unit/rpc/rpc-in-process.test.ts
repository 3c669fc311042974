/**
 * The whole protocol in one process: the daemon's dispatcher, invocation path and store behind
 * the real stdio transport, driven over an in-memory duplex pair by the conformance runner (no
 * child process for the daemon, in-process executor). Every check of the runner must pass here too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { createDaemon } from '../../../src/app/serve.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { serveStdio } from '../../../src/rpc/stdio-transport.js';
import { serveContext } from '../../../src/rpc/serve-context.js';
import { runConformance } from '../../../src/conformance/runner.js';
import { streamTransport } from '../../../src/conformance/transport.js';
import { REPO_ROOT, tempDir } from '../../helpers/repo.js';
import { TEST_BEARER_SECRET, mintBearer } from '../../helpers/tokens.js';

test('the conformance runner passes against the daemon in process, over an in-memory duplex pair', async () => {
  const logs: string[] = [];
  const services = await createDaemon(
    { transport: 'stdio', db: join(tempDir(), 'toolgate.db'), dev: false, executor: 'inprocess', env: { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET } },
    createLogger((l) => logs.push(l), 'warn'),
  );
  const toDaemon = new PassThrough();
  const fromDaemon = new PassThrough();
  const served = serveStdio(serveContext(services, { limits: { maxInFlight: 64 } }), toDaemon, fromDaemon);
  // The exit notification ends the served connection; the runner then sees the stream close.
  void served.finished.then(() => fromDaemon.end());
  const lines: string[] = [];
  try {
    const report = await runConformance({
      open: async () => streamTransport(fromDaemon, toDaemon, 'in-memory duplex pair'),
      multiConnection: false,
      tokenA: await mintBearer('inproc-alice'),
      tokenB: await mintBearer('inproc-bob'),
      secret: TEST_BEARER_SECRET,
      schemasDir: join(REPO_ROOT, 'schemas'),
      write: (l) => lines.push(l),
    });
    assert.equal(report.failed, 0, lines.join('\n'));
    assert.ok(report.passed >= 20, lines.join('\n'));
  } finally {
    served.close();
    await services.store.close();
  }
});
