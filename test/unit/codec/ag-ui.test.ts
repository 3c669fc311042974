// AG-UI codec: one stored message → one run (RUN_STARTED, TEXT_MESSAGE_* or
// TOOL_CALL_START/ARGS/END/RESULT, RUN_FINISHED), checked against @ag-ui/core's own
// validators and @ag-ui/client's verifier and message reducer.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventType } from '@ag-ui/core';
import { EventSchemas } from '@ag-ui/core/schemas';
import {
  encodeMessageAsAgUiRun,
  encodeTextMessageAsAgUi,
  encodeToolCallAsAgUi,
  runIdOf,
  sseFrame,
  type AgUiEvent,
  type AgUiToolCallEvent,
} from '../../../src/codec/ag-ui.js';
import { buildToolAgentOutput, projectText, type ToolAgentOutput, type ToolCallArgs } from '../../../src/codec/tool-output.js';
import { deriveUiHints } from '../../../src/codec/ui-hints.js';
import { compileStoredUi } from '../../../src/threads/ui.js';
import { validateUiSchema } from '../../helpers/ui-schema-validator.js';
import { follow, sseResponse, ThreadFollower, verifySse } from '../../helpers/ag-ui-client.js';

const ARGS: ToolCallArgs = {
  module: 'calendar',
  method: 'create',
  input: { title: 'Design review', start_at: '2026-04-21T10:00:00+08:00', end_at: '2026-04-21T11:00:00+08:00' },
};
const EVENT = {
  id: 'evt_01',
  owner_id: 'user_alice',
  title: 'Design review',
  start_at: '2026-04-21T10:00:00+08:00',
  end_at: '2026-04-21T11:00:00+08:00',
  location: null,
  description: null,
  created_at: '2026-04-20T09:00:00.000Z',
  updated_at: '2026-04-20T09:00:00.000Z',
};

const success: ToolAgentOutput = buildToolAgentOutput(
  { ok: true, module: 'calendar', method: 'create', data: { event: EVENT } },
  ARGS,
  'call_1',
  deriveUiHints,
);
const failure: ToolAgentOutput = buildToolAgentOutput(
  {
    ok: false,
    module: 'calendar',
    method: 'create',
    error: { code: 'INVALID_ACTION_INPUT', message: 'title is required', module: 'calendar', method: 'create' },
  },
  { ...ARGS, input: {} },
  'call_2',
  deriveUiHints,
);

function encode(out: ToolAgentOutput, timestamp?: number): AgUiToolCallEvent[] {
  return encodeToolCallAsAgUi(out, projectText(out), 'msg_1', compileStoredUi(out.ui_hints), timestamp);
}

function hasKey(value: unknown, key: string): boolean {
  if (Array.isArray(value)) return value.some((v) => hasKey(v, key));
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([k, v]) => k === key || hasKey(v, key));
}

describe('encodeToolCallAsAgUi', () => {
  test('emits START, ARGS, END, RESULT for the call, in that order', () => {
    const events = encode(success);
    assert.deepEqual(
      events.map((e) => e.type),
      [EventType.TOOL_CALL_START, EventType.TOOL_CALL_ARGS, EventType.TOOL_CALL_END, EventType.TOOL_CALL_RESULT],
    );
    assert.ok(events.every((e) => e.toolCallId === 'call_1'));
    const start = events[0]!;
    assert.equal(start.type, EventType.TOOL_CALL_START);
    if (start.type === EventType.TOOL_CALL_START) assert.equal(start.toolCallName, 'project_cli');
  });

  test('ARGS carries the whole tool_call_args as one JSON delta', () => {
    const args = encode(success)[1]!;
    assert.equal(args.type, EventType.TOOL_CALL_ARGS);
    if (args.type !== EventType.TOOL_CALL_ARGS) return;
    assert.equal(args.delta, JSON.stringify(ARGS));
    assert.deepEqual(JSON.parse(args.delta), ARGS);
  });

  test('RESULT content is the projection, byte for byte, on the stored message id', () => {
    for (const out of [success, failure]) {
      const result = encode(out)[3]!;
      assert.equal(result.type, EventType.TOOL_CALL_RESULT);
      if (result.type !== EventType.TOOL_CALL_RESULT) return;
      assert.equal(result.content, projectText(out));
      assert.equal(result.messageId, 'msg_1');
      assert.equal(result.role, 'tool');
    }
  });

  test('RESULT carries the compiled ui_schema top-level and in metadata; none when the call has no UI', () => {
    const result = encode(success)[3]!;
    assert.ok('ui_schema' in result && result.ui_schema, 'calendar.create has a stable UI');
    assert.deepEqual(result.ui_schema, compileStoredUi(success.ui_hints));
    assert.deepEqual(result.metadata, { ui_schema: result.ui_schema });
    assert.deepEqual(validateUiSchema(result.ui_schema), { ok: true });
    assert.ok(!('ui_schema' in encode(failure)[3]!));
    assert.ok(!('metadata' in encode(failure)[3]!));
    assert.ok(encode(success).slice(0, 3).every((e) => !('ui_schema' in e) && !('metadata' in e)));
  });

  test('ui_hints appear nowhere, even though the output holds them', () => {
    assert.ok(success.ui_hints, 'the fixture has hints to leak');
    for (const out of [success, failure]) {
      const events = encode(out, 1);
      assert.equal(hasKey(events, 'ui_hints'), false);
      assert.ok(!events.map((e) => sseFrame('x', e)).join('').includes('ui_hints'));
    }
  });

  test('is deterministic; a timestamp, when given, is on every event', () => {
    assert.equal(JSON.stringify(encode(success)), JSON.stringify(encode(success)));
    assert.equal(JSON.stringify(encode(success, 1_776_000_000_000)), JSON.stringify(encode(success, 1_776_000_000_000)));
    assert.ok(encode(success).every((e) => !('timestamp' in e)));
    assert.ok(encode(success, 1_776_000_000_000).every((e) => e.timestamp === 1_776_000_000_000));
  });

  test('every event validates with @ag-ui/core’s schemas, which keep ui_schema', () => {
    for (const out of [success, failure]) {
      for (const event of encode(out, 1_776_000_000_000)) {
        const parsed = EventSchemas.safeParse(event);
        assert.ok(parsed.success, `${event.type}: ${parsed.error?.message ?? ''}`);
        assert.deepEqual(parsed.data, event);
      }
    }
  });
});

describe('sseFrame', () => {
  test('is id, event type and one data line, then a blank line', () => {
    const event = encode(success)[3]!;
    const frame = sseFrame('msg_1:3', event);
    const lines = frame.split('\n');
    assert.deepEqual(lines.slice(0, 2), ['id: msg_1:3', 'event: TOOL_CALL_RESULT']);
    assert.ok(lines[2]!.startsWith('data: '));
    assert.deepEqual(JSON.parse(lines[2]!.slice('data: '.length)), event);
    assert.deepEqual(lines.slice(3), ['', '']);
  });
});

describe('encodeTextMessageAsAgUi', () => {
  test('is START (with the role), one CONTENT with the whole text, END — and no UI fields', () => {
    const events = encodeTextMessageAsAgUi('msg_u', 'user', 'Book a review', 5);
    assert.deepEqual(events, [
      { type: EventType.TEXT_MESSAGE_START, timestamp: 5, messageId: 'msg_u', role: 'user' },
      { type: EventType.TEXT_MESSAGE_CONTENT, timestamp: 5, messageId: 'msg_u', delta: 'Book a review' },
      { type: EventType.TEXT_MESSAGE_END, timestamp: 5, messageId: 'msg_u' },
    ]);
    for (const e of events) assert.ok(EventSchemas.safeParse(e).success, e.type);
  });

  test('an empty message has no CONTENT event', () => {
    assert.deepEqual(encodeTextMessageAsAgUi('m', 'assistant', '').map((e) => e.type), [EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_END]);
  });
});

describe('encodeMessageAsAgUiRun', () => {
  const conversation = (): AgUiEvent[] => [
    ...encodeMessageAsAgUiRun('thread-1', { kind: 'text', id: 'msg_u', role: 'user', content: 'Book a review' }, 1),
    ...encodeMessageAsAgUiRun('thread-1', { kind: 'tool', id: 'msg_t', output: success, text: projectText(success), uiSchema: compileStoredUi(success.ui_hints) }, 2),
    ...encodeMessageAsAgUiRun('thread-1', { kind: 'tool', id: 'msg_f', output: failure, text: projectText(failure), uiSchema: undefined }, 3),
    ...encodeMessageAsAgUiRun('thread-1', { kind: 'text', id: 'msg_a', role: 'assistant', content: 'Booked.' }, 4),
  ];
  const body = () => conversation().map((e, i) => sseFrame(String(i), e)).join('');

  test('frames each message as one run of the thread, named after the message', () => {
    const run = encodeMessageAsAgUiRun('thread-1', { kind: 'text', id: 'msg_u', role: 'user', content: 'hi' });
    assert.deepEqual(run[0], { type: EventType.RUN_STARTED, threadId: 'thread-1', runId: runIdOf('msg_u') });
    assert.deepEqual(run.at(-1), { type: EventType.RUN_FINISHED, threadId: 'thread-1', runId: runIdOf('msg_u') });
    assert.deepEqual(run.slice(1, -1), encodeTextMessageAsAgUi('msg_u', 'user', 'hi'));
    for (const e of conversation()) assert.ok(EventSchemas.safeParse(e).success, e.type);
  });

  test('passes @ag-ui/client’s verifier, run after run', async () => {
    assert.equal((await verifySse(body())).length, conversation().length);
  });

  test('@ag-ui/client rebuilds the conversation, the UI kept in the tool message’s metadata', async () => {
    const followed = await follow(new ThreadFollower(async () => sseResponse(body()), 'thread-1'));
    const ui = compileStoredUi(success.ui_hints);
    assert.deepEqual(followed.messages, [
      { id: 'msg_u', role: 'user', content: 'Book a review' },
      { id: 'call_1', role: 'assistant', toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'project_cli', arguments: JSON.stringify(ARGS) } }] },
      { id: 'msg_t', role: 'tool', toolCallId: 'call_1', content: projectText(success), metadata: { ui_schema: ui } },
      { id: 'call_2', role: 'assistant', toolCalls: [{ id: 'call_2', type: 'function', function: { name: 'project_cli', arguments: JSON.stringify({ ...ARGS, input: {} }) } }] },
      { id: 'msg_f', role: 'tool', toolCallId: 'call_2', content: projectText(failure) },
      { id: 'msg_a', role: 'assistant', content: 'Booked.' },
    ]);
    // The client drops the top-level copy (it is not an AG-UI field) and nothing else.
    assert.ok(followed.warnings.length > 0);
    for (const w of followed.warnings) assert.match(w, /\/ui_schema'?/);
  });

  test('a stream that does not start with a run is refused by the client', async () => {
    await assert.rejects(verifySse(conversation().slice(1).map((e) => sseFrame(undefined, e)).join('')), /First event must be 'RUN_STARTED'/);
  });
});
