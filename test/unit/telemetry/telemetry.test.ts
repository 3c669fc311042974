/**
 * src/telemetry in process: the readiness probe of a store that does not
 * answer, bounded action labels, the ops routes' answers, and tracing that
 * stays off (nothing loaded) without OTEL_TRACES_EXPORTER.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Store } from '../../../src/store/store.js';
import { storeAnswers } from '../../../src/telemetry/health.js';
import { ToolgateMetrics } from '../../../src/telemetry/metrics.js';
import { actionLabel } from '../../../src/telemetry/labels.js';
import { otlpTracesEndpoint, startTracing, tracingRequested } from '../../../src/telemetry/tracing.js';
import { opsRoutes } from '../../../src/http/ops-routes.js';
import { metricsEnabled } from '../../../src/app/observability.js';
import { observeToolCall } from '../../../src/telemetry/tool-call.js';
import { HostAsked } from '../../../src/runtime/peer.js';
import { traceStore } from '../../../src/telemetry/instrument.js';
import { errorType } from '../../../src/telemetry/spans.js';
import { CallStopped } from '../../../src/calls/call-stopped.js';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../../helpers/repo.js';

const hangingStore = { read: () => new Promise(() => {}) } as unknown as Store;
const failingStore = { read: () => Promise.reject(new Error('disk I/O error')) } as unknown as Store;
const answeringStore = { read: (work: (tx: unknown) => Promise<unknown>) => work({ messages: { getToolMessage: async () => undefined } }) } as unknown as Store;

test('a store that does not answer in time, or fails, is not ready', async () => {
  assert.equal(await storeAnswers(hangingStore, 20), false);
  assert.equal(await storeAnswers(failingStore, 20), false);
  assert.equal(await storeAnswers(answeringStore, 1000), true);
});

test('a traced store still stops a unit of work whose signal aborts (a cancel with tracing on)', async () => {
  const store = traceStore(openSqliteStore(join(tempDir(), 'traced.db')));
  try {
    const controller = new AbortController();
    controller.abort(new Error('cancelled by the test'));
    let ran = false;
    await assert.rejects(
      store.transaction(async () => {
        ran = true;
      }, { signal: controller.signal }),
      /cancelled by the test/,
    );
    assert.equal(ran, false, 'an aborted unit does not start');
  } finally {
    await store.close();
  }
});

test("a child span's error.type: a SQLSTATE, else the error's own name, else its class's", () => {
  // pg's DatabaseError as the driver makes it: named after the protocol message, its SQLSTATE in `code`.
  const pgError = Object.assign(new Error('insert or update violates foreign key constraint'), { name: 'error', severity: 'ERROR', code: '23503' });
  assert.equal(errorType(pgError), '23503');
  // A class whose name a bundler changed (esbuild gives a self-referencing class an inner `_` name) still says its own.
  const Renamed = class _CallStopped extends Error {
    override name = 'CallStopped';
  };
  assert.equal(errorType(new Renamed('x')), 'CallStopped');
  assert.equal(errorType(CallStopped.cancelled()), 'CallStopped');
  assert.equal(errorType(new TypeError('x')), 'TypeError');
  class PlainError extends Error {}
  assert.equal(errorType(new PlainError('x')), 'PlainError');
  assert.equal(errorType(new Error('x')), 'Error');
  assert.equal(errorType('a string'), 'unknown');
});

test('the action label comes from the action table; anything else is unknown', () => {
  assert.equal(actionLabel('calendar', 'create'), 'calendar.create');
  assert.equal(actionLabel('calendar', 'drop_tables'), 'unknown');
  assert.equal(actionLabel('__proto__', 'constructor'), 'unknown');
  assert.equal(actionLabel(42, undefined), 'unknown');
});

test('metrics.enabled defaults to on for loopback hosts only', () => {
  assert.equal(metricsEnabled(undefined, '127.0.0.1'), true);
  assert.equal(metricsEnabled(undefined, '::1'), true);
  assert.equal(metricsEnabled(undefined, '0.0.0.0'), false);
  assert.equal(metricsEnabled(true, '0.0.0.0'), true);
  assert.equal(metricsEnabled(false, '127.0.0.1'), false);
});

test('tracing is off without OTEL_TRACES_EXPORTER (or with none) and an unknown exporter is named', async () => {
  assert.equal(tracingRequested({}), false);
  assert.equal(tracingRequested({ OTEL_TRACES_EXPORTER: 'none' }), false);
  assert.equal(await startTracing({}, '0'), null);
  await assert.rejects(startTracing({ OTEL_TRACES_EXPORTER: 'zipkin' }, '0'), /unknown exporter "zipkin"/);
});

test('the OTLP traces endpoint is named as the SDK derives it, without credentials', () => {
  assert.equal(otlpTracesEndpoint({}), 'http://localhost:4318/v1/traces');
  assert.equal(otlpTracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' }), 'http://c:4318/v1/traces');
  assert.equal(otlpTracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://u:p@t/x' }), 'https://t/x');
});

test('/readyz says why it is not ready; /metrics is 404 when metrics are off', async () => {
  let ready = true;
  const metrics = new ToolgateMetrics({ sessions: () => 0, subscriptions: () => 0 });
  const withMetrics = opsRoutes({ ready: async () => (ready ? { ready } : { ready, reason: 'draining' }), scrape: () => metrics.scrape(), onError: () => {} });
  const without = opsRoutes({ ready: async () => ({ ready: true }), onError: () => {} });
  const server = createServer((req, res) => {
    const route = req.headers['x-metrics'] === 'off' ? without : withMetrics;
    if (!route(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    ready = false;
    const r = await fetch(`${base}/readyz`);
    assert.equal(r.status, 503);
    assert.deepEqual(await r.json(), { status: 'not ready', reason: 'draining' });
    assert.equal((await fetch(`${base}/metrics`)).status, 200);
    assert.equal((await fetch(`${base}/metrics`, { headers: { 'x-metrics': 'off' } })).status, 404);
  } finally {
    server.close();
  }
});

test('an elicited call (the host asks its user, then retries with the answer) is counted once, by the answer', async () => {
  const metrics = new ToolgateMetrics({ sessions: () => 0, subscriptions: () => 0 });
  const info = { transport: 'mcp', executor: 'inprocess', module: 'memory', method: 'forget', toolCallId: 'f' };
  const asked = { tool_call_id: 'f' } as unknown as ConstructorParameters<typeof HostAsked>[0];
  await assert.rejects(observeToolCall(metrics, info, () => Promise.reject(new HostAsked(asked))), HostAsked);
  await observeToolCall(metrics, info, async () => ({ status: 'success' }));
  const calls = (await metrics.registry.getSingleMetric('toolgate_tool_calls_total')!.get()).values;
  assert.deepEqual(calls.map((v) => [v.labels.status, v.value]), [['success', 1]]);
  const inFlight = (await metrics.registry.getSingleMetric('toolgate_tool_calls_in_flight')!.get()).values;
  assert.deepEqual(inFlight.map((v) => v.value), [0], 'both requests left the in-flight gauge');
});
