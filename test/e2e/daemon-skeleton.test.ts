/**
 * The walking skeleton, from outside: a host spawns `toolgate serve --stdio`,
 * speaks JSON-RPC with LSP framing, and reads the SQLite file afterwards.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHost, openSession, TRANSPORTS, type Host } from '../helpers/host.js';
import { dbRows, storedText } from '../helpers/db.js';
import { TEST_ENGINE } from '../helpers/pg.js';
import { mintBearer } from '../helpers/tokens.js';
import type { ToolResponse } from '../../src/protocol/index.js';


async function invoke(host: Host, session_id: string, thread_id: string, tool_call_id: string, args: unknown) {
  return host.request<ToolResponse>('tool/invoke', { session_id, thread_id, tool_call_id, args });
}

for (const transport of TRANSPORTS) {
  describe(`over ${transport}`, () => {
  test('create then read an event: notification before response, projection stored and replayed byte for byte', async () => {
    const host = await startHost();
    const token = await mintBearer('alice', { name: 'Alice', phone: '+15550001' });
    try {
      const init = await host.request<{ protocol_version: string; tool: { name: string; input_schema: { required: string[] } } }>(
        'initialize',
        { protocol_version: '1', client_info: { name: 'test', version: '1' } },
      );
      assert.equal(init.protocol_version, '1');
      assert.equal(init.tool.name, 'project_cli');
      assert.deepEqual([...init.tool.input_schema.required].sort(), ['input', 'method', 'module']);

      const session = await openSession(host, token);
      assert.equal(session.user_id, 'alice');
      assert.ok(session.allowed_actions.includes('calendar.create'));

      const createArgs = {
        module: 'calendar',
        method: 'create',
        input: { title: 'Standup', start_at: '2026-04-21T10:00:00+08:00', end_at: '2026-04-21T10:30:00+08:00', location: 'Room 1' },
      };
      const mark = host.wire.length;
      const created = await invoke(host, session.session_id, 'thread-1', 'call-1', createArgs);
      const events = host.wire.slice(mark);
      assert.deepEqual(events.map((e) => e.kind), ['notification', 'response'], 'one tool/result, then the response');
      const note = events[0]!.payload as Record<string, unknown>;
      assert.equal(events[0]!.method, 'tool/result');
      assert.equal(note.final, true);
      assert.equal(note.status, 'success');
      assert.equal(note.tool_name, 'project_cli');
      assert.deepEqual(note.tool_call_args, createArgs);
      assert.equal(created.status, 'success');
      assert.equal(created.tool_call_id, 'call-1');

      const text = created.content[0]!.text;
      const projected = JSON.parse(text) as { status: string; module: string; method: string; data: { event: Record<string, unknown> } };
      assert.deepEqual(Object.keys(projected), ['status', 'module', 'method', 'data']);
      assert.equal(text, JSON.stringify({ status: 'success', module: 'calendar', method: 'create', data: (note.result as { data: unknown }).data }));
      const event = projected.data.event;
      assert.equal(event.title, 'Standup');
      assert.equal(event.owner_id, 'alice');
      assert.equal(typeof event.id, 'string');

      const read = await invoke(host, session.session_id, 'thread-1', 'call-2', {
        module: 'calendar',
        method: 'read',
        input: { mode: 'day', date: '2026-04-21', timezone: 'Asia/Shanghai' },
      });
      const readData = JSON.parse(read.content[0]!.text) as { data: { items: Array<{ id: string }>; count: number } };
      assert.equal(readData.data.count, 1);
      assert.equal(readData.data.items[0]!.id, event.id);

      await host.request('message/append', { session_id: session.session_id, thread_id: 'thread-1', role: 'assistant', content: 'Done.' });

      const ctx = await host.request<{ messages: Array<Record<string, unknown>>; next_before: string | null }>('history/get', {
        session_id: session.session_id,
        thread_id: 'thread-1',
        view: 'context',
      });
      assert.equal(ctx.next_before, null);
      assert.deepEqual(ctx.messages.map((m) => m.role), ['tool', 'tool', 'assistant']);
      assert.equal(ctx.messages[0]!.content, text, 'context view is byte-identical to the tool/invoke text');
      assert.equal(ctx.messages[1]!.content, read.content[0]!.text);
      assert.equal(ctx.messages[0]!.tool_call_id, 'call-1');
      for (const m of ctx.messages) assert.equal(typeof m.content, 'string');

      const ui = await host.request<{ messages: Array<Record<string, unknown>> }>('history/get', {
        session_id: session.session_id,
        thread_id: 'thread-1',
        view: 'ui',
      });
      assert.deepEqual(ui.messages[0]!.ui_schema, note.ui_schema, 'replayed UI equals the live notification UI');

      assert.equal(await host.stop(), 0);

      const typeOfContent = TEST_ENGINE === 'postgres' ? 'pg_typeof(content)::text' : 'typeof(content)';
      const rows = await dbRows<{ content: string; t: string; metadata: string }>(
        host.dbPath,
        `SELECT content, ${typeOfContent} AS t, CAST(metadata AS TEXT) AS metadata FROM messages WHERE role = 'tool' ORDER BY seq`,
      );
      assert.equal(rows.length, 2);
      assert.equal(rows[0]!.t, 'text');
      assert.equal(rows[0]!.content, text);
      const meta = JSON.parse(rows[0]!.metadata) as { tool_agent_output: Record<string, unknown> };
      assert.deepEqual(Object.keys(meta.tool_agent_output).sort(), [
        'error', 'result', 'status', 'tool_call_args', 'tool_call_id', 'tool_name', 'ui_hints',
      ]);
      assert.equal(meta.tool_agent_output.tool_name, 'project_cli');
      assert.deepEqual(meta.tool_agent_output.tool_call_args, createArgs);
      assert.deepEqual(meta.tool_agent_output.result, note.result);
      const audits = await dbRows<{ subject: string; actions: string }>(host.dbPath, 'SELECT * FROM credential_audit');
      assert.equal(audits.length, 2, 'one audited credential per call');
      assert.equal(audits[0]!.subject, 'alice');
    } finally {
      await host.stop();
    }
  });

  test('no bearer token or credential reaches stderr or any database byte', async () => {
    const host = await startHost();
    const token = await mintBearer('alice');
    try {
      const session = await openSession(host, token);
      await invoke(host, session.session_id, 't', 'c1', {
        module: 'calendar', method: 'create', input: { title: "Secret-free title", start_at: '2026-01-01T00:00:00Z', end_at: '2026-01-01T01:00:00Z' },
      });
      await invoke(host, session.session_id, 't', 'c2', { module: 'calendar', method: 'read', input: { mode: 'day', date: 'not-a-date' } });
      await assert.rejects(host.request('session/open', { auth: { type: 'bearer', token: `${token}x` } }));
    } finally {
      await host.stop();
    }
    const blobs = await storedText(host.dbPath, host.dataDir);
    const signature = token.split('.')[2]!;
    const jwtShape = /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/;
    for (const blob of [host.stderr(), ...blobs]) {
      assert.ok(!blob.includes(signature), 'the bearer token signature appears nowhere');
      // Nothing the user typed here looks like a JWT, so any JWT-shaped bytes would be a leaked
      // bearer token or a controlled credential the daemon minted.
      assert.ok(!jwtShape.test(blob), 'no JWT-shaped bytes in stderr or any database file');
    }
    assert.ok(!jwtShape.test(host.stderr()), 'no JWT-shaped string in stderr');
    const audit = JSON.stringify(await dbRows(host.dbPath, 'SELECT * FROM credential_audit'));
    assert.ok(!jwtShape.test(audit), 'the audit holds no token');
  });
  });
}
