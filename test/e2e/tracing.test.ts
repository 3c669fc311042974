/**
 * Traces (contract section 15), from outside: a spawned daemon with the
 * standard OTEL_* variables exports its spans over OTLP/HTTP (JSON) to a
 * loopback receiver run by the test. Each call is one `execute_tool
 * project_cli` span with the GenAI attributes, a child span per store
 * transaction and per project-cli process; a host's `_meta.traceparent`
 * becomes its parent; no token, argument value or result is in any byte;
 * and tracing takes nothing from the call's lifecycle: a cancel still stops
 * a running call.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startHost, openSession } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait-for.js';
import { holdWriteLock } from '../helpers/write-lock.js';
import { dbCount } from '../helpers/db.js';
import { TEST_ENGINE } from '../helpers/pg.js';
import type { CallCancelResult, CallGetResult, ToolResponse } from '../../src/protocol/index.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
}

/** A loopback OTLP/HTTP trace receiver: keeps every body (raw) and every span. */
async function otlpReceiver(): Promise<{ server: Server; url: string; raw: string[]; spans: OtlpSpan[]; resources: unknown[] }> {
  const raw: string[] = [];
  const spans: OtlpSpan[] = [];
  const resources: unknown[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      raw.push(body);
      if (req.url === '/v1/traces') {
        const doc = JSON.parse(body) as { resourceSpans: Array<{ resource: unknown; scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
        for (const rs of doc.resourceSpans) {
          resources.push(rs.resource);
          for (const ss of rs.scopeSpans) spans.push(...ss.spans);
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, raw, spans, resources };
}

const attr = (span: OtlpSpan, key: string): unknown => {
  const v = span.attributes?.find((a) => a.key === key)?.value;
  return v === undefined ? undefined : Object.values(v)[0];
};

/** One MCP request over Streamable HTTP; the answer may come as JSON or as one SSE event. */
async function mcpPost(port: number, token: string, body: unknown, headers: Record<string, string> = {}): Promise<{ session?: string; message: any }> {
  const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const messages = text.trimStart().startsWith('{')
    ? [JSON.parse(text)]
    : text.split('\n').filter((l) => l.startsWith('data:') && l.length > 5).map((l) => JSON.parse(l.slice(5)));
  const answer = messages.find((m: { id?: unknown }) => m.id !== undefined) ?? messages[0] ?? null;
  return { session: res.headers.get('mcp-session-id') ?? undefined, message: answer };
}

test('each tool call is an execute_tool span with store and subprocess children; a traceparent is its parent', async () => {
  const receiver = await otlpReceiver();
  const host = await startHost({
    transport: 'ws',
    env: {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'toolgate-under-test',
      OTEL_BSP_SCHEDULE_DELAY: '20',
    },
  });
  const token = await mintBearer('trace-user');
  const hostTrace = '0af7651916cd43dd8448eb211c80319c';
  const hostSpan = 'b7ad6b7169203331';
  try {
    const s = await openSession(host, token);
    const secretTitle = 'Argument value nobody may export';
    const args = { module: 'calendar', method: 'create', input: { title: secretTitle, start_at: '2026-03-03T09:00:00Z', end_at: '2026-03-03T10:00:00Z' } };
    const traced = await host.request<ToolResponse>('tool/invoke', {
      session_id: s.session_id, thread_id: 'tr', tool_call_id: 'with-parent', args, _meta: { traceparent: `00-${hostTrace}-${hostSpan}-01` },
    });
    assert.equal(traced.status, 'success');
    const plain = await host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 'tr', tool_call_id: 'no-parent', args: { ...args, input: { ...args.input, title: 'Second' } } });
    assert.equal(plain.status, 'success');
    const eventId = (JSON.parse(traced.content[0]!.text) as { data: { event: { id: string } } }).data.event.id;

    const toolSpans = () => receiver.spans.filter((sp) => sp.name === 'execute_tool project_cli');
    await waitFor(() => {
      const ids = new Set(toolSpans().map((sp) => sp.spanId));
      return ids.size === 2 && receiver.spans.filter((sp) => sp.parentSpanId && ids.has(sp.parentSpanId) && sp.name.startsWith('toolgate.subprocess')).length === 2;
    }, 'two tool spans and their children exported');

    const withParent = toolSpans().find((sp) => attr(sp, 'gen_ai.tool.call.id') === 'with-parent')!;
    assert.ok(withParent, 'the call with a traceparent has its span');
    assert.equal(withParent.traceId, hostTrace, 'the host trace continues');
    assert.equal(withParent.parentSpanId, hostSpan, "the host's span is the parent");
    assert.equal(attr(withParent, 'gen_ai.operation.name'), 'execute_tool');
    assert.equal(attr(withParent, 'gen_ai.tool.name'), 'project_cli');
    assert.equal(attr(withParent, 'toolgate.action'), 'calendar.create');
    assert.equal(attr(withParent, 'toolgate.status'), 'success');
    assert.equal(attr(withParent, 'toolgate.executor'), 'subprocess');

    const noParent = toolSpans().find((sp) => attr(sp, 'gen_ai.tool.call.id') === 'no-parent')!;
    assert.notEqual(noParent.traceId, hostTrace, 'a call without traceparent starts its own trace');
    assert.ok(!noParent.parentSpanId, 'and is a root span');

    const children = receiver.spans.filter((sp) => sp.parentSpanId === withParent.spanId);
    assert.ok(children.some((c) => c.name === 'toolgate.store.transaction'), `a store span is a child (${children.map((c) => c.name).join(', ')})`);
    assert.ok(children.some((c) => c.name === 'toolgate.subprocess project-cli'), 'the project-cli process is a child');
    for (const c of children) assert.equal(c.traceId, hostTrace);

    const resource = JSON.stringify(receiver.resources);
    assert.match(resource, /toolgate-under-test/, 'OTEL_SERVICE_NAME names the service');

    // MCP over Streamable HTTP: the traceparent header of the request becomes the parent.
    const mcpTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const mcpParent = '00f067aa0ba902b7';
    const init = await mcpPost(host.port!, token, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'trace-test', version: '0' } } });
    assert.ok(init.session, `an MCP session (${JSON.stringify(init.message)})`);
    const sid = { 'mcp-session-id': init.session! };
    await fetch(`http://127.0.0.1:${host.port}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...sid },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    }).then((r) => r.text());
    const called = await mcpPost(host.port!, token, {
      jsonrpc: '2.0', id: 2, method: 'tools/call',
      params: { name: 'project_cli', arguments: { module: 'calendar', method: 'read', input: {} } },
    }, { ...sid, traceparent: `00-${mcpTrace}-${mcpParent}-01` });
    assert.ok(called.message.result, `tools/call answered (${JSON.stringify(called.message)})`);
    await waitFor(() => toolSpans().some((sp) => sp.traceId === mcpTrace), 'the MCP call span exported');
    const mcpSpan = toolSpans().find((sp) => sp.traceId === mcpTrace)!;
    assert.equal(mcpSpan.parentSpanId, mcpParent, 'the traceparent header is the parent on /mcp');
    assert.equal(attr(mcpSpan, 'toolgate.transport'), 'mcp');
    assert.equal(attr(mcpSpan, 'toolgate.action'), 'calendar.read');

    const bytes = receiver.raw.join('\n');
    for (const secret of [token, secretTitle, 'Second', eventId, '2026-03-03T09:00:00Z', 'trace-user', s.session_id]) {
      assert.ok(!bytes.includes(secret), `${secret.slice(0, 24)}… is in no exported byte`);
    }
  } finally {
    await host.stop();
    receiver.server.close();
  }
});

// Tracing wraps the store (src/telemetry/instrument.ts): the wrapper must hand each unit of work its call's
// signal, or a cancel, a time limit or shutdown no longer stops it. On PostgreSQL an in-process unit held by a
// lock cannot be undone (call-lifecycle.test.ts says why): SQLite only.
test('with tracing on, call/cancel still stops a running in-process call and nothing it wrote is kept', { timeout: 60_000, skip: TEST_ENGINE === 'postgres' && 'an in-process unit waiting for a PostgreSQL lock is not stoppable' }, async () => {
  const receiver = await otlpReceiver();
  const host = await startHost({
    transport: 'ws',
    args: ['--executor', 'inprocess'],
    env: { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '20' },
  });
  try {
    const token = await mintBearer('trace-cancel');
    const s = await openSession(host, token);
    const other = await host.connect();
    const there = await openSession(other, token);
    const title = 'cancelled while traced';
    const key = { session_id: there.session_id, thread_id: 'tc', tool_call_id: 'c1' };
    // Another process holds the write lock: the call's unit waits for it, running and cancellable.
    const release = await holdWriteLock(host.dbPath);
    let released = false;
    try {
      const pending = host.request<ToolResponse>('tool/invoke', {
        session_id: s.session_id, thread_id: 'tc', tool_call_id: 'c1',
        args: { module: 'calendar', method: 'create', input: { title, start_at: '2026-03-04T09:00:00Z', end_at: '2026-03-04T10:00:00Z' } },
      });
      // Handled at once: a wait below that times out must fail this test, not leave a rejection for a later one.
      pending.catch(() => {});
      await waitFor(async () => (await other.request<CallGetResult>('call/get', key).catch(() => undefined))?.state === 'running', 'the call to be running');
      const before = host.stderr().length;
      const cancel = other.request<CallCancelResult>('call/cancel', key);
      cancel.catch(() => {});
      await waitFor(() => host.stderr().slice(before).includes('"tool call stopping"'), () => `the daemon to stop the call\n${host.stderr().slice(-2000)}`);
      // Released now, a unit that missed the stop would commit: the answer and the database tell.
      await release();
      released = true;
      const [answer] = await Promise.all([pending, cancel]);
      const failure = JSON.parse(answer.content[0]!.text) as { ok: boolean; error?: { code?: string } };
      assert.equal(failure.error?.code, 'CANCELLED', answer.content[0]!.text);
      assert.equal(await dbCount(host.dbPath, 'SELECT count(*) AS n FROM events WHERE title = ?', [title]), 0, 'nothing the cancelled call wrote is kept');
      // The stopped unit's span says why by the error's own name, whatever the bundle calls its class.
      const stoppedUnit = await waitFor(() => {
        const call = receiver.spans.find((sp) => sp.name === 'execute_tool project_cli' && attr(sp, 'gen_ai.tool.call.id') === 'c1');
        return call && receiver.spans.find((sp) => sp.parentSpanId === call.spanId && sp.name === 'toolgate.store.transaction' && attr(sp, 'error.type') !== undefined);
      }, 'the cancelled call and its stopped unit traced');
      assert.equal(attr(stoppedUnit, 'error.type'), 'CallStopped');
    } finally {
      if (!released) await release();
    }
  } finally {
    await host.stop();
    receiver.server.close();
  }
});
