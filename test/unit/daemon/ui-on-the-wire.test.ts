/**
 * The tool owns its UI: every action with a stable template sends a
 * `ui_schema` that validates against schemas/ui-schema.json, history's ui
 * view recompiles exactly the live one, and no wire message — notification,
 * response or history page — ever carries a `ui_hints` key.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openSession, TRANSPORTS, type Client } from '../../helpers/host.js';
import { EXECUTOR_FOR, startInProcess } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';
import { validateUiSchema } from '../../helpers/ui-schema-validator.js';
import { assertWireShape } from '../../helpers/wire-validator.js';
import { dbRows } from '../../helpers/db.js';

interface Note {
  tool_call_id: string;
  final: boolean;
  status: string;
  ui_schema?: unknown;
}

function keysDeep(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => keysDeep(v, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.add(k);
      keysDeep(v, out);
    }
  }
  return out;
}

for (const transport of TRANSPORTS) {
  describe(`over ${transport} (${EXECUTOR_FOR[transport]} executor)`, () => {
    test('every message matches schemas/; ui_schema on every templated action, valid, replayed identically; ui_hints never on the wire', async () => {
      const host = await startInProcess({ executor: EXECUTOR_FOR[transport], transport });
      try {
        const alice = await openSession(host, await mintBearer('alice', { phone: '+15550101', name: 'Alice' }));
        const bobClient: Client = transport === 'ws' ? await host.connect() : host;
        const bob = await openSession(bobClient, await mintBearer('bob', { phone: '+15550102', name: 'Bob' }));
        let n = 0;
        const call = async (client: Client, sessionId: string, module: string, method: string, input: Record<string, unknown>) => {
          const r = await client.request<{ content: Array<{ text: string }> }>('tool/invoke', {
            session_id: sessionId, thread_id: sessionId === alice.session_id ? 'ui-a' : 'ui-b', tool_call_id: `ui-${++n}`, args: { module, method, input },
          });
          return JSON.parse(r.content[0]!.text) as { data: any };
        };
        const ev = (title: string) => ({ title, start_at: '2026-04-21T10:00:00+08:00', end_at: '2026-04-21T11:00:00+08:00' });
        const created = await call(host, alice.session_id, 'calendar', 'create', { ...ev('Design review'), location: 'Room 4' });
        const eventId = created.data.event.id;
        await call(host, alice.session_id, 'calendar', 'create', { items: [ev('A'), { title: '' }, ev('C')] });
        await call(host, alice.session_id, 'calendar', 'read', { mode: 'day', date: '2026-04-21', timezone: 'Asia/Shanghai' });
        await call(host, alice.session_id, 'calendar', 'update', { event_id: eventId, description: 'Bring the slides' });
        await call(host, alice.session_id, 'contacts', 'read', { phone: '+15550102' });
        const shared = await call(host, alice.session_id, 'calendar', 'share', { event_id: eventId, user_ids: ['bob'] });
        await call(bobClient, bob.session_id, 'calendar', 'accept_invite', { invite_id: shared.data.invites[0].invite_id });
        const second = await call(host, alice.session_id, 'calendar', 'create', ev('Second'));
        const invite2 = await call(host, alice.session_id, 'calendar', 'share', { event_id: second.data.event.id, user_ids: ['bob'] });
        await call(bobClient, bob.session_id, 'calendar', 'reject_invite', { invite_id: invite2.data.invites[0].invite_id });
        await call(host, alice.session_id, 'memory', 'update', { key: 'tea', content: 'oolong' });
        await call(host, alice.session_id, 'memory', 'read', {});
        await call(host, alice.session_id, 'calendar', 'delete', { event_id: second.data.event.id });
        await call(host, alice.session_id, 'calendar', 'read', { mode: 'event', event_id: 'evt_nope' });
        await host.request('message/append', {
          session_id: alice.session_id, thread_id: 'ui-a', role: 'assistant', content: 'Done', worker_output: { status: 'success', answer: 'Done' },
        });

        const wire = [...host.wire, ...(bobClient === host ? [] : bobClient.wire)];
        const historyPages = [];
        for (const [client, s, thread] of [[host, alice, 'ui-a'], [bobClient, bob, 'ui-b']] as const) {
          for (const view of ['ui', 'context']) {
            historyPages.push(await client.request<{ messages: Array<{ tool_call_id?: string; ui_schema?: unknown; role: string }> }>('history/get', {
              session_id: s.session_id, thread_id: thread, view, limit: 500,
            }));
          }
        }
        const everything = [...wire.map((e) => e.payload), ...historyPages];
        assert.ok(!keysDeep(everything).has('ui_hints'), 'no ui_hints key anywhere on the wire');

        for (const e of wire) {
          if (e.method === 'tool/result') assertWireShape('ToolResultNotification', e.payload);
          if (e.method === 'tool/invoke' && e.kind === 'response') assertWireShape('ToolResponse', e.payload);
        }
        const rows = await dbRows<{ metadata: string }>(host.dbPath, "SELECT CAST(metadata AS TEXT) AS metadata FROM messages WHERE role = 'tool'");
        for (const r of rows) assertWireShape('ToolAgentOutput', (JSON.parse(r.metadata) as { tool_agent_output: unknown }).tool_agent_output);

        const finals = new Map<string, Note>();
        let schemas = 0;
        for (const e of wire) {
          if (e.method !== 'tool/result') continue;
          const note = e.payload as Note;
          if (note.final) finals.set(note.tool_call_id, note);
          if (note.ui_schema !== undefined) {
            schemas++;
            const v = validateUiSchema(note.ui_schema);
            assert.ok(v.ok, `${note.tool_call_id}: ${JSON.stringify(v)}`);
          }
        }
        const actionOf = (id: string) => {
          const ev = wire.find((e) => e.method === 'tool/result' && (e.payload as Note).tool_call_id === id)!;
          const args = (ev.payload as { tool_call_args: { module: string; method: string } }).tool_call_args;
          return `${args.module}.${args.method}`;
        };
        const templated = new Set(['calendar.read', 'calendar.create', 'calendar.update', 'calendar.delete', 'calendar.share', 'calendar.accept_invite', 'calendar.reject_invite', 'contacts.read', 'memory.update']);
        for (const [id, note] of finals) {
          const action = actionOf(id);
          if (note.status !== 'failure' && templated.has(action)) assert.ok(note.ui_schema, `${action} (${id}) carries a ui_schema`);
          if (!templated.has(action)) assert.equal(note.ui_schema, undefined, `${action} has no template`);
        }
        assert.ok(schemas >= 12);

        for (const page of [historyPages[0]!, historyPages[2]!]) {
          for (const m of page.messages.filter((x) => x.role === 'tool')) {
            assert.deepEqual(m.ui_schema, finals.get(m.tool_call_id!)?.ui_schema, `history ui_schema of ${m.tool_call_id} equals the live one`);
          }
        }
        for (const page of [historyPages[1]!, historyPages[3]!]) {
          for (const m of page.messages) assert.equal(m.ui_schema, undefined, 'the context view carries no UI');
        }
        const assistant = historyPages[0]!.messages.find((m) => m.role === 'assistant')!;
        assert.equal(assistant.ui_schema, undefined, 'assistant messages carry no UI');
        if (bobClient !== host) await bobClient.close();
      } finally {
        await host.stop();
      }
    });
  });
}
