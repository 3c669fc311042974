/**
 * A trace exporter that cannot reach its collector is an operator's
 * problem, said once in words: the failed export is one log line, with the
 * error's message and no stack (contract section 21).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startHost, openSession } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import type { ToolResponse } from '../../src/protocol/index.js';

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('a trace export that fails (no collector) is one log line without a stack', async () => {
  const host = await startHost({
    transport: 'ws',
    env: {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await closedPort()}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      // Spans wait for the shutdown's flush, whose failure is what is logged.
      OTEL_BSP_SCHEDULE_DELAY: '600000',
      // The exporter retries a refused connection until its timeout (10 s by default) and then reports the
      // last error: a second is enough for the same ECONNREFUSED, and the stop no longer waits ten.
      OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
    },
  });
  try {
    const s = await openSession(host, await mintBearer('trace-down'));
    const r = await host.request<ToolResponse>('tool/invoke', {
      session_id: s.session_id, thread_id: 't', tool_call_id: 'c1', args: { module: 'memory', method: 'read', input: {} },
    });
    assert.equal(r.status, 'success');
  } finally {
    await host.stop();
  }
  const lines = host.stderr().split('\n').filter((l) => /export/i.test(l) && /fail/i.test(l));
  assert.equal(lines.length, 1, host.stderr());
  const line = JSON.parse(lines[0]!) as { level: string; err: unknown };
  assert.equal(line.level, 'warn');
  assert.equal(typeof line.err, 'string');
  assert.doesNotMatch(String(line.err), /\n|\s+at\s+\S+\s+\(|node:internal/, 'no stack');
});
