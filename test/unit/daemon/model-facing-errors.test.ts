/**
 * Failures a model can act on: every issue names the real field and what it
 * accepts (a union input is judged by the branch its shape picks), the
 * input_schema that comes with it is short enough to read, and an unknown or
 * refused action lists what the session may call — the same bytes from both
 * executors, because the daemon decides those before any executor runs.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSession } from '../../helpers/host.js';
import { startInProcess, type InProcessHost } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';
import { tempDir } from '../../helpers/repo.js';
import type { ToolProjection, ToolResponse } from '../../../src/protocol/index.js';

interface Issue {
  path: string;
  message: string;
  expected?: string;
}
/** The failure projection, with the fields these errors carry. */
type Failure = Extract<ToolProjection, { status: 'failure' }> & { error: { issues?: Issue[]; input_schema?: unknown; allowed_actions?: string[] } };

const at = (day: number, hour: number) => `2026-04-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00+08:00`;
const event = (day: number) => ({ title: `Gym ${day}`, start_at: at(day, 7), end_at: at(day, 8) });

function configFile(): string {
  const file = join(tempDir(), 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      agents: {
        default: { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.read', 'memory.*'] },
        reader: { enabled_skills: ['calendar'], allowed_actions: ['calendar.read'] },
      },
    }),
  );
  return file;
}

/** The calls whose failures are compared across executors (no ids or times in them). */
const FAILING_CALLS = [
  { module: 'calendar', method: 'create', input: { start_at: at(21, 10), end_at: at(21, 11) } },
  { module: 'calendar', method: 'create', input: { title: 'x', start_at: '2026-04-21T10:00:00', end_at: at(21, 11), colour: 'red' } },
  { module: 'calendar', method: 'read', input: { date: '2026-04-21' } },
  { module: 'calendar', method: 'read', input: { mode: 'day', date: '21/04/2026' } },
  { module: 'calendar', method: 'list', input: {} },
  { module: 'weather', method: 'read', input: {} },
];

for (const executor of ['subprocess', 'inprocess'] as const) describe(`model-facing errors (${executor} executor)`, () => {
  let host: InProcessHost;
  let session: { session_id: string; allowed_actions: string[] };
  let reader: { session_id: string; allowed_actions: string[] };
  let n = 0;

  before(async () => {
    host = await startInProcess({ executor, args: ['--config', configFile()] });
    const token = await mintBearer('alice', { name: 'Alice' });
    session = await openSession(host, token);
    reader = await openSession(host, token, { agent: 'reader' });
  });
  after(async () => {
    await host.stop();
  });

  const invoke = async (args: unknown, sessionId = session.session_id) => {
    const r = await host.request<ToolResponse>('tool/invoke', { session_id: sessionId, thread_id: 'errors', tool_call_id: `c${++n}`, args });
    return { status: r.status, text: r.content[0]!.text, body: JSON.parse(r.content[0]!.text) as Failure };
  };

  test('calendar.create without a title names `title`, not the union', async () => {
    const { status, body } = await invoke(FAILING_CALLS[0]);
    assert.equal(status, 'failure');
    assert.equal(body.error.code, 'INVALID_ACTION_INPUT');
    assert.deepEqual(body.error.issues, [{ path: 'title', message: 'required (string)', expected: 'string' }]);
  });

  test('every bad field of a single event is named with what it accepts', async () => {
    const { body } = await invoke(FAILING_CALLS[1]);
    const byPath = new Map(body.error.issues!.map((i) => [i.path, i]));
    assert.deepEqual([...byPath.keys()].sort(), ['colour', 'start_at'], JSON.stringify(body.error.issues));
    assert.match(byPath.get('start_at')!.message, /date-time with an offset/);
    assert.equal(byPath.get('start_at')!.expected?.startsWith('date-time'), true);
    assert.match(byPath.get('colour')!.message, /unknown field/);
  });

  test('a bad items[3].start_at in a batch is named by its path; the other items are created', async () => {
    const items: unknown[] = [event(1), event(2), event(3), { ...event(4), start_at: '2026-04-04 07:00' }, event(5)];
    const { status, body } = await invoke({ module: 'calendar', method: 'create', input: { items } });
    assert.equal(status, 'partial');
    const data = (body as unknown as { data: { items: Array<{ index: number; ok: boolean; error?: { issues: Issue[] } }>; created: number } }).data;
    assert.equal(data.created, 4);
    const bad = data.items[3]!;
    assert.equal(bad.ok, false);
    assert.deepEqual(bad.error!.issues.map((i) => i.path), ['items[3].start_at']);
  });

  test('a batch with a stray top-level field names that field', async () => {
    const { body } = await invoke({ module: 'calendar', method: 'create', input: { items: [event(6)], title: 'x' } });
    assert.deepEqual(body.error.issues!.map((i) => i.path), ['title']);
  });

  test('calendar.read without `mode` names `mode` and its values', async () => {
    const { body } = await invoke(FAILING_CALLS[2]);
    assert.equal(body.error.issues![0]!.path, 'mode');
    assert.match(body.error.issues![0]!.message, /"day" \| "range" \| "event"/);
  });

  test('input_schema names formats instead of spelling them as regexes', async () => {
    const { text, body } = await invoke(FAILING_CALLS[3]);
    assert.equal(body.error.issues![0]!.path, 'date');
    assert.ok(!text.includes('"pattern"'), 'no regex in the failure');
    assert.ok(!text.includes('$schema'));
    const schema = JSON.stringify(body.error.input_schema);
    assert.ok(schema.includes('"format":"date"') && schema.includes('"format":"date-time"'), schema);
    assert.ok(text.length < 2500, `a short failure (${text.length} chars)`);
  });

  test('UNKNOWN_ACTION lists the actions this session may call', async () => {
    for (const args of [FAILING_CALLS[4], FAILING_CALLS[5]]) {
      const { body } = await invoke(args);
      assert.deepEqual(Object.keys(body), ['status', 'error']);
      assert.equal(body.error.code, 'UNKNOWN_ACTION');
      assert.deepEqual(body.error.allowed_actions, session.allowed_actions);
      assert.ok(body.error.allowed_actions!.includes('calendar.read'));
    }
    const { body } = await invoke(FAILING_CALLS[4], reader.session_id);
    assert.deepEqual(body.error.allowed_actions, ['calendar.read']);
  });

  test('ACTION_NOT_ALLOWED lists the actions this session may call', async () => {
    const { body } = await invoke({ module: 'calendar', method: 'create', input: event(7) }, reader.session_id);
    assert.equal(body.error.code, 'ACTION_NOT_ALLOWED');
    assert.deepEqual(body.error.allowed_actions, ['calendar.read']);
  });

  test('the failures are the same bytes from either executor', async () => {
    const texts: string[] = [];
    for (const args of FAILING_CALLS) texts.push((await invoke(args)).text);
    // The suites run in order: the second executor compares with the first.
    EXECUTOR_TEXTS.set(executor, texts);
    const other = EXECUTOR_TEXTS.get(executor === 'subprocess' ? 'inprocess' : 'subprocess');
    if (other) assert.deepEqual(texts, other);
    else assert.equal(executor, 'subprocess');
  });
});

const EXECUTOR_TEXTS = new Map<string, string[]>();
