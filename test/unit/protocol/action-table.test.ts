// The action table (src/protocol/action-table.ts) is the one declaration of the actions: the router's
// registry, ACTION_DATA, isBatchCall, the MCP annotations and the inspector's list are read off it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACTIONS, ACTION_EXAMPLES, ACTION_NAMES, ACTIONS_WITH_UI, actionSpec, isBatchCall, type ActionName } from '../../../src/protocol/action-table.js';
import { ACTION_DATA } from '../../../src/protocol/actions.js';
import { REGISTRY, inputJsonSchema } from '../../../src/cli-router/registry.js';
import { toolAnnotations } from '../../../src/mcp/mcp-server.js';
import { deriveUiHints } from '../../../src/codec/ui-hints.js';
import { ALL_ACTIONS } from '../../helpers/credentials.js';
import { REPO_ROOT } from '../../helpers/repo.js';

const names = Object.keys(ACTIONS) as ActionName[];

test('the router runs exactly the table’s actions, each with the table’s description and input', () => {
  assert.deepEqual([...REGISTRY.keys()].sort(), [...ACTION_NAMES]);
  assert.deepEqual([...ALL_ACTIONS].sort(), [...ACTION_NAMES], 'the test helpers’ list is the table’s');
  for (const name of names) {
    const action = REGISTRY.get(name)!;
    assert.equal(`${action.module}.${action.method}`, name);
    assert.equal(action.summary, ACTIONS[name].description);
    assert.equal(action.input, ACTIONS[name].input(), `${name}: the table's schema, built once`);
    assert.equal(typeof inputJsonSchema(action), 'object');
  }
});

test('every data shape the table names is a $defs entry of schemas/actions.json, and ACTION_DATA is the table’s', () => {
  const defs = (JSON.parse(readFileSync(join(REPO_ROOT, 'schemas', 'actions.json'), 'utf8')) as { $defs: Record<string, unknown> }).$defs;
  for (const name of names) {
    const spec = actionSpec(name)!;
    assert.ok(spec.data in defs, `${name}: ${spec.data}`);
    if (spec.batch) assert.ok(spec.batch.data in defs, `${name}: ${spec.batch.data}`);
    assert.equal(ACTION_DATA[name], spec.data);
  }
});

test('isBatchCall asks the table: only an action with a batch form, and only for its batch input', () => {
  assert.equal(isBatchCall({ module: 'calendar', method: 'create', input: { items: [] } }), true);
  assert.equal(isBatchCall({ module: 'calendar', method: 'create', input: { title: 't' } }), false);
  assert.equal(isBatchCall({ module: 'calendar', method: 'update', input: { items: [] } }), false);
  assert.equal(isBatchCall({ module: 'weather', method: 'read', input: { items: [] } }), false);
  assert.equal(isBatchCall({ module: 'toString', method: '', input: { items: [] } }), false, 'never an inherited key');
  assert.equal(actionSpec('constructor'), undefined);
});

test('the MCP tool’s annotations are those of the session’s actions', () => {
  for (const name of names) {
    const own = ACTIONS[name].annotations;
    const tool = toolAnnotations([name]);
    assert.equal(tool.readOnlyHint, own.readOnlyHint, name);
    assert.equal(tool.destructiveHint, own.destructiveHint, name);
    assert.equal(tool.idempotentHint, own.idempotentHint && !own.readOnlyHint, name);
  }
  assert.equal(toolAnnotations(names).idempotentHint, false, 'calendar.create is not idempotent');
  assert.equal(toolAnnotations(['memory.update', 'memory.read']).idempotentHint, true);
  assert.equal(toolAnnotations(['calendar.read', 'memory.read']).idempotentHint, false, 'read-only: MCP gives it no meaning');
  assert.equal(toolAnnotations(['weather.read']).destructiveHint, true, 'an unknown name claims nothing safe');
});

test('an action has a ui_hints deriver exactly when the table names one; the inspector has an example for each', () => {
  for (const name of names) {
    const [module, method] = name.split('.') as [string, string];
    const withUi = ACTIONS_WITH_UI.includes(name);
    assert.equal(withUi, ACTIONS[name].ui !== null, name);
    if (!withUi) assert.equal(deriveUiHints(module, method, {}, 'success'), null);
    assert.equal(ACTION_EXAMPLES[name], ACTIONS[name].example);
  }
});

test('project-cli’s bundle carries the table but none of the named wire shapes (start-up builds no output schema)', () => {
  const bundle = readFileSync(join(REPO_ROOT, 'dist', 'project-cli.bundle.cjs'), 'utf8');
  assert.ok(bundle.includes(ACTIONS['calendar.read'].description), 'the table is in the bundle');
  // protocol/registry.ts's `named()` (every $defs shape goes through it) and actions.ts's Event description.
  assert.ok(!bundle.includes('is declared twice'), 'no named() shape registry in the bundle');
  assert.ok(!bundle.includes('A calendar event; ids are strings'), 'no data shape in the bundle');
});
