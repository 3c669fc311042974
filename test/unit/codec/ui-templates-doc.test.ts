/**
 * docs/protocols/ui-schema.md shows every template with an example: each one is
 * compiled here from fixed action data by the daemon's own deriver and compiler
 * (`deriveUiHints`, `compileUiSchema`), so the page shows exactly the bytes a
 * front end receives. The test fails when a template's output changes and the
 * page does not; `TOOLGATE_WRITE_UI_TEMPLATES=1` rewrites the examples.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deriveUiHints, type ToolStatus } from '../../../src/codec/ui-hints.js';
import { compileUiSchema } from '../../../src/codec/ui-schema-compiler.js';
import { REPO_ROOT } from '../../helpers/repo.js';
import { assertWireShape } from '../../helpers/wire-validator.js';

const PAGE = join(REPO_ROOT, 'docs', 'protocols', 'ui-schema.md');

const event = {
  id: 'evt_1',
  owner_id: 'alice',
  title: 'Design review',
  start_at: '2031-04-21T10:00:00+08:00',
  end_at: '2031-04-21T11:00:00+08:00',
  location: 'Room 4',
  description: null,
  created_at: '2031-04-01T09:00:00.000Z',
  updated_at: '2031-04-01T09:00:00.000Z',
};

/** Template name → the call whose data it is compiled from. */
const EXAMPLES: Array<[name: string, module: string, method: string, status: ToolStatus, data: unknown]> = [
  ['event_list', 'calendar', 'read', 'success', { items: [event], count: 1, next_cursor: null }],
  ['event (created)', 'calendar', 'create', 'success', { event }],
  ['event (updated)', 'calendar', 'update', 'success', { event: { ...event, title: 'Design review (moved)', updated_at: '2031-04-02T09:00:00.000Z' } }],
  ['event_batch_item', 'calendar', 'create', 'partial', { index: 1, ok: false, error: { code: 'INVALID_ACTION_INPUT', message: 'end_at must be after start_at' } }],
  [
    'event_batch',
    'calendar',
    'create',
    'partial',
    { items: [{ index: 0, ok: true, event }, { index: 1, ok: false, error: { code: 'INVALID_ACTION_INPUT', message: 'end_at must be after start_at' } }], created: 1, failed: 1 },
  ],
  ['event_deleted', 'calendar', 'delete', 'success', { event_id: 'evt_1', deleted: true }],
  ['event_shared', 'calendar', 'share', 'success', { event_id: 'evt_1', invites: [{ invite_id: 'inv_1', user_id: 'bob', status: 'pending' }] }],
  ['invite_status', 'calendar', 'accept_invite', 'success', { invite: { invite_id: 'inv_1', event_id: 'evt_1', status: 'accepted' } }],
  ['contact_list', 'contacts', 'read', 'success', { items: [{ user_id: 'bob', name: 'Bob', phone: '+15550100' }], count: 1 }],
  ['memory_saved', 'memory', 'update', 'success', { memory: { key: 'lunch', content: 'no peanuts', updated_at: '2031-04-01T09:00:00.000Z' } }],
];

const marker = (name: string) => [`<!-- ui-template:${name} -->\n`, `<!-- /ui-template:${name} -->`] as const;

function block(module: string, method: string, status: ToolStatus, data: unknown): string {
  const hints = deriveUiHints(module, method, data, status);
  assert.ok(hints, `${module}.${method} derives no hints`);
  const ui = compileUiSchema(hints);
  assertWireShape('UiSchema', ui);
  return `Data (\`result.data\` of \`${module}.${method}\`, status \`${status}\`):\n\n\`\`\`json\n${JSON.stringify(data, null, 2)}\n\`\`\`\n\n\`ui_schema\`:\n\n\`\`\`json\n${JSON.stringify(ui, null, 2)}\n\`\`\`\n`;
}

test('ui-schema.md shows every template with the ui_schema the daemon compiles for its example', () => {
  let page = readFileSync(PAGE, 'utf8');
  for (const [name, module, method, status, data] of EXAMPLES) {
    const [open, close] = marker(name);
    const start = page.indexOf(open);
    const end = page.indexOf(close);
    assert.ok(start >= 0 && end > start, `ui-schema.md has no ${open.trim()} … ${close} block`);
    const expected = block(module, method, status, data);
    const actual = page.slice(start + open.length, end);
    if (process.env.TOOLGATE_WRITE_UI_TEMPLATES === '1') page = page.slice(0, start + open.length) + expected + page.slice(end);
    else assert.equal(actual, expected, `the ${name} example in ui-schema.md is stale: TOOLGATE_WRITE_UI_TEMPLATES=1 node --test ${import.meta.url.replace(/^.*\/dist\//, 'dist/')}`);
  }
  if (process.env.TOOLGATE_WRITE_UI_TEMPLATES === '1') writeFileSync(PAGE, page);
});
