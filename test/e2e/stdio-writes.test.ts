/**
 * Transport, as the host's pipe sees it: the stdio daemon hands each burst —
 * a call's tool/result notifications and its response — to stdout in one
 * write, every message whole (Content-Length header with its body).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { createDaemon } from '../../src/app/serve.js';
import { createLogger } from '../../src/runtime/logger.js';
import { serveStdio } from '../../src/rpc/stdio-transport.js';
import { serveContext } from '../../src/rpc/serve-context.js';
import { tempDir } from '../helpers/repo.js';
import { mintBearer, TEST_BEARER_SECRET } from '../helpers/tokens.js';

test('stdio: a tool call’s notifications and its response leave in one write', async () => {
  const dir = tempDir();
  const services = await createDaemon(
    { transport: 'stdio', db: join(dir, 'toolgate.db'), dev: false, executor: 'inprocess', env: { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_HOME: dir } },
    createLogger(() => {}),
  );
  const writes: string[] = [];
  const toHost = new PassThrough();
  const stdout = new Writable({
    write(chunk: Buffer, _enc, done) {
      writes.push(chunk.toString('utf8'));
      toHost.write(chunk, () => done());
    },
  });
  const stdin = new PassThrough();
  const handle = serveStdio(serveContext(services, { limits: { maxInFlight: 16, maxMessageBytes: 1 << 20 } }), stdin, stdout);
  const host = createMessageConnection(new StreamMessageReader(toHost), new StreamMessageWriter(stdin));
  host.listen();
  try {
    await host.sendRequest('initialize', { protocol_version: '1' });
    const { session_id } = (await host.sendRequest('session/open', { auth: { type: 'bearer', token: await mintBearer('writes') } })) as { session_id: string };
    for (const [id, input] of [
      ['one', { title: 'One', start_at: '2026-04-21T10:00:00Z', end_at: '2026-04-21T11:00:00Z' }],
      ['batch', { items: [{ title: 'A', start_at: '2026-04-21T10:00:00Z', end_at: '2026-04-21T11:00:00Z' }, { title: 'B', start_at: '2026-04-21T12:00:00Z', end_at: '2026-04-21T13:00:00Z' }] }],
    ] as const) {
      writes.length = 0;
      await host.sendRequest('tool/invoke', { session_id, thread_id: 't', tool_call_id: id, args: { module: 'calendar', method: 'create', input } });
      const carrying = writes.filter((w) => w.includes(`"tool_call_id":"${id}"`));
      assert.equal(carrying.length, 1, `one write carries call ${id}: ${writes.length} writes`);
      const burst = carrying[0]!;
      const notifications = burst.split('"method":"tool/result"').length - 1;
      assert.equal(notifications, id === 'batch' ? 3 : 1, 'every notification of the call is in that write');
      assert.match(burst, /"result":\{"tool_call_id"/, 'and so is the response');
      assert.ok(burst.startsWith('Content-Length: '), 'whole messages only');
    }
  } finally {
    host.dispose();
    handle.close();
    await services.store.close();
  }
});
