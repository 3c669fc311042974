/**
 * schemas/action-inputs.json publishes each action's input schema: it must be
 * exactly what INVALID_ACTION_INPUT carries in error.input_schema, so a host (or
 * a second implementation) reads the same bytes the model reads.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REGISTRY, inputJsonSchema } from '../../../src/cli-router/registry.js';
import { REPO_ROOT } from '../../helpers/repo.js';

test('schemas/action-inputs.json holds, for every action, the schema error.input_schema carries', () => {
  const doc = JSON.parse(readFileSync(join(REPO_ROOT, 'schemas', 'action-inputs.json'), 'utf8')) as { $defs: Record<string, unknown> };
  assert.deepEqual(Object.keys(doc.$defs).sort(), [...REGISTRY.keys()].sort());
  for (const [name, action] of REGISTRY) assert.deepEqual(doc.$defs[name], inputJsonSchema(action), name);
});
