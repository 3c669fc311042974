import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toolMessageOf } from '../../../src/calls/tool-message.js';
import { render, type CliDocument } from '../../../src/cli-router/core.js';
import type { ToolCallArgs } from '../../../src/protocol/tool.js';

const event = {
  id: 'e1', owner_id: 'u1', title: 'Team "sync" \\ 😀 \u2028 </script>', start_at: '2026-04-21T10:00:00+08:00', end_at: '2026-04-21T11:00:00+08:00',
  location: null, description: 'line\nbreak\ttab', created_at: '2026-04-20T00:00:00.000Z', updated_at: '2026-04-20T00:00:00.000Z',
};
const single: ToolCallArgs = { module: 'calendar', method: 'create', input: { title: 'x' } };
const batch: ToolCallArgs = { module: 'calendar', method: 'create', input: { items: [{}, {}] } };

/** Documents as the core renders them: successes of every shape a result takes, a partial batch, a failure. */
const cases: Array<[string, CliDocument, ToolCallArgs]> = [
  ['a single event', { ok: true, module: 'calendar', method: 'create', data: { event } }, single],
  ['a batch with a failed item (partial)', { ok: true, module: 'calendar', method: 'create', data: { items: [{ index: 0, ok: true, event }, { index: 1, ok: false, error: { code: 'INVALID_ACTION_INPUT', message: 'bad' } }], created: 1, failed: 1 } }, batch],
  ['numbers, empty values, nesting', { ok: true, module: 'memory', method: 'read', data: { items: [], count: 0, n: -0, big: 1e21, small: 5e-7, nested: [[{}], { a: [null, true] }], next_cursor: null } }, { module: 'memory', method: 'read', input: {} }],
  ['no data at all', { ok: true, module: 'memory', method: 'read', data: undefined }, { module: 'memory', method: 'read', input: {} }],
  ['a failure', { ok: false, module: 'calendar', method: 'create', error: { code: 'NOT_FOUND', message: 'no such event', module: 'calendar', method: 'create' } }, single],
];

test('the projection text made from the document text is exactly JSON.stringify of the projection', () => {
  for (const [name, doc, args] of cases) {
    const { doc: rendered, stdout } = render(doc);
    const reused = toolMessageOf(rendered, args, 'c1', stdout);
    const fresh = toolMessageOf(rendered, args, 'c1');
    assert.equal(reused.text, JSON.stringify(reused.projection), name);
    assert.equal(reused.text, fresh.text, name);
  }
});

test('a document that is not exactly {ok, module, method, data} has its projection serialized, whatever text comes along', () => {
  const reordered = { module: 'calendar', method: 'create', ok: true, data: { event } } as unknown as CliDocument;
  const extra = { ok: true, module: 'calendar', method: 'create', data: { event }, note: 'x' } as unknown as CliDocument;
  for (const doc of [reordered, extra]) {
    const message = toolMessageOf(doc, single, 'c1', JSON.stringify(doc));
    assert.equal(message.text, JSON.stringify(message.projection));
  }
});
