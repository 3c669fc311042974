// Tool UI codec: result data → ui_hints → ui_schema, checked against schemas/ui-schema.json and
// against snapshots in test/snapshots/ui/<template>.json (UPDATE_SNAPSHOTS=1 rewrites them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deriveUiHints, type ToolStatus, type UiHints, type UiTemplate } from '../../../src/codec/ui-hints.js';
import { compileUiSchema } from '../../../src/codec/ui-schema-compiler.js';
import type { UiSchema } from '../../../src/codec/ui-schema-types.js';
import { validateUiSchema } from '../../helpers/ui-schema-validator.js';
import { REPO_ROOT } from '../../helpers/repo.js';

const SNAPSHOT_DIR = join(REPO_ROOT, 'test', 'snapshots', 'ui');
const UPDATE = process.env['UPDATE_SNAPSHOTS'] === '1';

const EVENT_A = {
  id: 'evt_01',
  owner_id: 'user_alice',
  title: 'Design review',
  start_at: '2026-04-21T10:00:00+08:00',
  end_at: '2026-04-21T11:00:00+08:00',
  location: 'Room 4',
  description: 'Walk through the tool UI vocabulary.',
  created_at: '2026-04-20T09:00:00.000Z',
  updated_at: '2026-04-20T09:00:00.000Z',
};
const EVENT_B = {
  id: 'evt_02',
  owner_id: 'user_bob',
  title: 'Lunch',
  start_at: '2026-04-21T12:30:00+08:00',
  end_at: '2026-04-21T13:30:00+08:00',
  location: null,
  description: null,
  created_at: '2026-04-19T08:00:00.000Z',
  updated_at: '2026-04-19T08:00:00.000Z',
};

interface Case {
  template: UiTemplate;
  name: string;
  module: string;
  method: string;
  status: ToolStatus;
  data: unknown;
}

const CASES: Case[] = [
  { template: 'event_list', name: 'calendar.read two events', module: 'calendar', method: 'read', status: 'success',
    data: { items: [EVENT_A, EVENT_B], count: 2, next_cursor: null } },
  { template: 'event_list', name: 'calendar.read empty', module: 'calendar', method: 'read', status: 'success',
    data: { items: [], count: 0, next_cursor: null } },
  { template: 'event', name: 'calendar.create single', module: 'calendar', method: 'create', status: 'success',
    data: { event: EVENT_A } },
  { template: 'event', name: 'calendar.update', module: 'calendar', method: 'update', status: 'success',
    data: { event: { ...EVENT_B, title: 'Long lunch', updated_at: '2026-04-21T01:00:00.000Z' } } },
  { template: 'event_batch', name: 'calendar.create batch partial', module: 'calendar', method: 'create', status: 'partial',
    data: {
      items: [
        { index: 0, ok: true, event: EVENT_A },
        { index: 1, ok: false, error: { code: 'INVALID_ACTION_INPUT', message: 'end_at must be after start_at', module: 'calendar', method: 'create' } },
        { index: 2, ok: true, event: EVENT_B },
      ],
      created: 2,
      failed: 1,
    } },
  { template: 'event_batch', name: 'calendar.create batch all failed', module: 'calendar', method: 'create', status: 'failure',
    data: { items: [{ index: 0, ok: false, error: { code: 'INVALID_ACTION_INPUT', message: 'title: required' } }], created: 0, failed: 1 } },
  { template: 'event_batch_item', name: 'calendar.create batch item ok', module: 'calendar', method: 'create', status: 'partial',
    data: { index: 0, ok: true, event: EVENT_A } },
  { template: 'event_batch_item', name: 'calendar.create batch item failed', module: 'calendar', method: 'create', status: 'partial',
    data: { index: 1, ok: false, error: { code: 'INVALID_ACTION_INPUT', message: 'start_at: expected an ISO-8601 date-time with offset' } } },
  { template: 'event_deleted', name: 'calendar.delete', module: 'calendar', method: 'delete', status: 'success',
    data: { event_id: 'evt_01', deleted: true } },
  { template: 'event_shared', name: 'calendar.share', module: 'calendar', method: 'share', status: 'success',
    data: { event_id: 'evt_01', invites: [
      { invite_id: 'inv_01', user_id: 'user_bob', status: 'pending' },
      { invite_id: 'inv_02', user_id: 'user_carol', status: 'pending' },
    ] } },
  { template: 'invite_status', name: 'calendar.accept_invite', module: 'calendar', method: 'accept_invite', status: 'success',
    data: { invite: { invite_id: 'inv_01', event_id: 'evt_01', status: 'accepted' } } },
  { template: 'invite_status', name: 'calendar.reject_invite', module: 'calendar', method: 'reject_invite', status: 'success',
    data: { invite: { invite_id: 'inv_02', event_id: 'evt_01', status: 'rejected' } } },
  { template: 'contact_list', name: 'contacts.read', module: 'contacts', method: 'read', status: 'success',
    data: { items: [
      { user_id: 'user_bob', name: 'Bob', phone: '+15550100' },
      { user_id: 'user_dave', name: null, phone: '+15550199' },
      { user_id: 'user_erin', name: null, phone: null },
    ], count: 3 } },
  { template: 'contact_list', name: 'contacts.read empty', module: 'contacts', method: 'read', status: 'success',
    data: { items: [], count: 0 } },
  { template: 'memory_saved', name: 'memory.update', module: 'memory', method: 'update', status: 'success',
    data: { memory: { key: 'standup', content: 'Daily standup is at 09:30, Mon–Fri.', updated_at: '2026-04-21T02:00:00.000Z' } } },
];

// Listing every template here makes the compiler fail to type-check when one is added without a case.
// `approval` is the one not derived from a result (a call awaiting approval): tested on its own below.
const ALL_TEMPLATES: Record<Exclude<UiTemplate, 'approval'>, true> = {
  event_list: true, event: true, event_batch: true, event_batch_item: true, event_deleted: true,
  event_shared: true, invite_status: true, contact_list: true, memory_saved: true,
};

function hintsOf(c: Case): UiHints {
  const hints = deriveUiHints(c.module, c.method, c.data, c.status);
  assert.ok(hints, `${c.name}: expected hints`);
  assert.equal(hints.template, c.template, `${c.name}: template`);
  return hints;
}

test('every template has at least one sample case', () => {
  const covered = new Set(CASES.map((c) => c.template));
  for (const t of Object.keys(ALL_TEMPLATES)) assert.ok(covered.has(t as UiTemplate), `no case for ${t}`);
});

test('template approval: the confirmation card of a call awaiting approval validates against schemas/ui-schema.json', () => {
  const expires_at = '2026-04-21T02:10:00.000Z';
  const cards: UiHints[] = [
    { template: 'approval', action: 'calendar.delete', event: EVENT_A, memory: null, user_ids: null, input: [{ name: 'event_id', value: 'evt_01' }], expires_at },
    { template: 'approval', action: 'calendar.share', event: EVENT_A, memory: null, user_ids: ['user_bob'], input: [{ name: 'user_ids', value: '["user_bob"]' }], expires_at },
    {
      template: 'approval',
      action: 'memory.forget',
      event: null,
      memory: { key: 'standup', content: 'Daily standup is at 09:30.', updated_at: '2026-04-21T02:00:00.000Z' },
      user_ids: null,
      input: [{ name: 'key', value: 'standup' }],
      expires_at,
    },
    { template: 'approval', action: 'calendar.delete', event: null, memory: null, user_ids: null, input: [{ name: 'event_id', value: 'evt_gone' }], expires_at },
  ];
  for (const hints of cards) {
    const schema = compileUiSchema(hints);
    const checked = validateUiSchema(schema);
    assert.ok(checked.ok, JSON.stringify(checked));
    assert.match(schema.title ?? '', /^Approve /);
    assert.ok(JSON.stringify(schema).includes('Awaiting approval'));
  }
  // The card names what will change: the event about to be deleted, the memory about to be forgotten.
  assert.ok(JSON.stringify(compileUiSchema(cards[0]!)).includes('Will be deleted'));
  assert.ok(JSON.stringify(compileUiSchema(cards[2]!)).includes('Will be forgotten'));
});

for (const template of Object.keys(ALL_TEMPLATES) as UiTemplate[]) {
  test(`template ${template}: data → hints → ui_schema validates and matches the snapshot`, () => {
    const snapshot: Record<string, { hints: UiHints; ui_schema: UiSchema }> = {};
    for (const c of CASES.filter((x) => x.template === template)) {
      const hints = hintsOf(c);
      const schema = compileUiSchema(hints);
      const result = validateUiSchema(schema);
      assert.deepEqual(result, { ok: true }, `${c.name}: ui_schema does not validate`);
      snapshot[c.name] = { hints, ui_schema: schema };
    }
    const file = join(SNAPSHOT_DIR, `${template}.json`);
    if (UPDATE) {
      mkdirSync(SNAPSHOT_DIR, { recursive: true });
      writeFileSync(file, `${JSON.stringify(snapshot, null, 2)}\n`);
      return;
    }
    assert.ok(existsSync(file), `missing snapshot ${file}; run with UPDATE_SNAPSHOTS=1`);
    assert.deepEqual(snapshot, JSON.parse(readFileSync(file, 'utf8')));
  });
}

test('compiling is deterministic, also for hints that went through JSON storage', () => {
  for (const c of CASES) {
    const hints = hintsOf(c);
    const stored = JSON.parse(JSON.stringify(hints)) as UiHints;
    assert.deepEqual(stored, hints, `${c.name}: hints are not JSON-native`);
    const first = JSON.stringify(compileUiSchema(hints));
    assert.equal(JSON.stringify(compileUiSchema(hints)), first, c.name);
    assert.equal(JSON.stringify(compileUiSchema(stored)), first, `${c.name}: replay differs`);
    assert.equal(JSON.stringify(hintsOf({ ...c, data: structuredClone(c.data) })), JSON.stringify(hints), c.name);
  }
});

test('hints keep only the fields the template shows', () => {
  const hints = deriveUiHints('calendar', 'read', { items: [EVENT_A], count: 1, next_cursor: null }, 'success');
  assert.deepEqual(hints, {
    template: 'event_list',
    count: 1,
    events: [{
      id: 'evt_01', owner_id: 'user_alice', title: 'Design review',
      start_at: '2026-04-21T10:00:00+08:00', end_at: '2026-04-21T11:00:00+08:00',
      location: 'Room 4', description: 'Walk through the tool UI vocabulary.',
    }],
  });
  const item = deriveUiHints('calendar', 'create', {
    index: 3, ok: false, error: { code: 'CONFLICT', message: 'x', module: 'calendar', method: 'create', detail: { a: 1 } },
  }, 'partial');
  assert.deepEqual(item, { template: 'event_batch_item', item: { index: 3, ok: false, error: { code: 'CONFLICT', message: 'x' } } });
});

test('an event card shows location and description only when set', () => {
  const hints = deriveUiHints('calendar', 'create', { event: EVENT_B }, 'success');
  assert.ok(hints);
  const text = JSON.stringify(compileUiSchema(hints));
  assert.ok(!text.includes('"Location"') && !text.includes('"Description"'));
});

test('hints come only from data of the protocol’s shape (src/protocol/actions.ts), strict as it is', () => {
  // The protocol's Event always carries location and description (null when unset), and no other field.
  const { location: _l, description: _d, ...bare } = EVENT_B;
  assert.equal(deriveUiHints('calendar', 'create', { event: bare }, 'success'), null, 'absent is not null');
  assert.equal(deriveUiHints('calendar', 'create', { event: { ...EVENT_B, colour: 'red' } }, 'success'), null, 'an unknown field');
  // A share's invites are pending by definition.
  const share = { event_id: 'evt_01', invites: [{ invite_id: 'inv_01', user_id: 'user_bob', status: 'accepted' }] };
  assert.equal(deriveUiHints('calendar', 'share', share, 'success'), null);
});

test('actions without a stable UI, unknown actions and failures give no hints', () => {
  const memory = { items: [{ key: 'k', content: 'c', updated_at: '2026-04-21T02:00:00.000Z' }], count: 1, next_cursor: null };
  assert.equal(deriveUiHints('memory', 'read', memory, 'success'), null);
  assert.equal(deriveUiHints('memory', 'forget', { key: 'k', forgotten: true }, 'success'), null);
  assert.equal(deriveUiHints('calendar', 'export', { items: [], count: 0 }, 'success'), null);
  assert.equal(deriveUiHints('weather', 'read', { items: [], count: 0 }, 'success'), null);
  assert.equal(deriveUiHints('calendar.read', '', { items: [], count: 0 }, 'success'), null);
  assert.equal(deriveUiHints('', 'calendar.read', { items: [], count: 0 }, 'success'), null);
  assert.equal(deriveUiHints('toString', 'constructor', {}, 'success'), null);
  for (const c of CASES.filter((x) => x.template !== 'event_batch')) {
    assert.equal(deriveUiHints(c.module, c.method, c.data, 'failure'), null, c.name);
  }
  // A batch whose items all failed is a failure, yet its per-item errors are worth showing.
  assert.equal(deriveUiHints('calendar', 'create', { items: [], created: 0, failed: 0 }, 'failure')?.template, 'event_batch');
  assert.equal(deriveUiHints('calendar', 'create', undefined, 'failure'), null);
});

test('data that does not match the action shape gives null and never throws', () => {
  const junk: unknown[] = [null, undefined, 0, 'text', true, [], [EVENT_A], {}, { data: {} }];
  for (const c of CASES) for (const data of junk) {
    assert.equal(deriveUiHints(c.module, c.method, data, 'success'), null, `${c.name} with ${JSON.stringify(data)}`);
  }
  const bad: [string, string, unknown][] = [
    ['calendar', 'read', { items: [{ ...EVENT_A, title: undefined }], count: 1 }],
    ['calendar', 'read', { items: [{ ...EVENT_A, start_at: 1745200800 }], count: 1 }],
    ['calendar', 'read', { items: [{ ...EVENT_A, id: 1 }], count: 1 }],
    ['calendar', 'read', { items: [{ ...EVENT_A, location: 42 }], count: 1 }],
    ['calendar', 'read', { items: [EVENT_A], count: '1' }],
    ['calendar', 'read', { items: [EVENT_A] }],
    ['calendar', 'read', { items: 'none', count: 0 }],
    ['calendar', 'create', { event: null }],
    ['calendar', 'create', { items: [{ index: 0, ok: true }], created: 1, failed: 0 }],
    ['calendar', 'create', { items: [{ index: 0, ok: false, error: 'boom' }], created: 0, failed: 1 }],
    ['calendar', 'create', { items: [{ index: -1, ok: true, event: EVENT_A }], created: 1, failed: 0 }],
    ['calendar', 'create', { items: [], created: 1.5, failed: 0 }],
    ['calendar', 'create', { index: 0, ok: 'yes', event: EVENT_A }],
    ['calendar', 'update', { items: [EVENT_A], count: 1 }],
    ['calendar', 'delete', { event_id: 'evt_01', deleted: false }],
    ['calendar', 'delete', { event_id: 7, deleted: true }],
    ['calendar', 'share', { event_id: 'evt_01', invites: [{ invite_id: 'i', user_id: 'u', status: 'maybe' }] }],
    ['calendar', 'share', { event_id: 'evt_01' }],
    ['calendar', 'accept_invite', { invite: { invite_id: 'i', status: 'accepted' } }],
    ['calendar', 'reject_invite', { invite_id: 'i', event_id: 'e', status: 'rejected' }],
    ['contacts', 'read', { items: [{ user_id: 'u', name: 5, phone: null }], count: 1 }],
    ['contacts', 'read', { items: [{ name: 'Bob', phone: '+1' }], count: 1 }],
    ['memory', 'update', { memory: { key: 'k', updated_at: '2026-04-21T02:00:00.000Z' } }],
    ['memory', 'update', { key: 'k', content: 'c', updated_at: '2026-04-21T02:00:00.000Z' }],
  ];
  for (const [module, method, data] of bad) {
    assert.equal(deriveUiHints(module, method, data, 'success'), null, `${module}.${method} ${JSON.stringify(data)}`);
  }
});

test('no compiled ui_schema carries a ui_hints key', () => {
  const keys = (value: unknown, out: string[] = []): string[] => {
    if (Array.isArray(value)) for (const v of value) keys(v, out);
    else if (typeof value === 'object' && value !== null) {
      for (const [k, v] of Object.entries(value)) {
        out.push(k);
        keys(v, out);
      }
    }
    return out;
  };
  for (const c of CASES) {
    const schema = compileUiSchema(hintsOf(c));
    assert.ok(!keys(schema).includes('ui_hints'), c.name);
    assert.ok(!keys(schema).includes('template'), `${c.name}: hint vocabulary leaked`);
  }
});

test('the validator rejects what the schema forbids', () => {
  const good: UiSchema = { version: '1', component: { type: 'text', text: 'hi' } };
  assert.deepEqual(validateUiSchema(good), { ok: true });
  const rejected: unknown[] = [
    {},
    { version: '2', component: { type: 'text', text: 'hi' } },
    { version: '1', component: { type: 'text', text: 'hi' }, ui_hints: {} },
    { version: '1', component: { type: 'text', text: 'hi', color: 'red' } },
    { version: '1', component: { type: 'marquee', text: 'hi' } },
    { version: '1', component: { type: 'status_badge', label: 'x', tone: 'loud' } },
    { version: '1', component: { type: 'card', title: 't', children: [{ type: 'field', label: 'l', value: 3 }] } },
    { version: '1', component: { type: 'actions', items: [{ label: 'x', kind: 'link', module: 'm', method: 'x', input: {} }] } },
  ];
  for (const value of rejected) {
    const r = validateUiSchema(value);
    assert.equal(r.ok, false, JSON.stringify(value));
    if (!r.ok) assert.ok(r.errors.length > 0);
  }
});
