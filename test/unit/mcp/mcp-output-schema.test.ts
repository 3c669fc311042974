/**
 * The MCP tool's `outputSchema` is portable: it draws none of the findings of
 * MCP Inspector's `--strict` tool-schema lint (Inspector 2.12, clients/cli:
 * `type-union`, `untyped-schema`, `boolean-schema`, `remote-ref`), whose rules
 * are restated here; and `data`, declared an object there, is an object for
 * every action.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TOOL_OUTPUT_JSON_SCHEMA } from '../../../src/mcp/mcp-server.js';
import { ACTION_DATA_SHAPES } from '../../../src/protocol/actions.js';
import { portableJsonSchema, selfContainedJsonSchema } from '../../../src/protocol/self-contained.js';

const BOOLEAN_VALUED = new Set(['additionalProperties', 'unevaluatedProperties', 'additionalItems', 'unevaluatedItems']);
const MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const ARRAYS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SINGLE = ['items', 'contains', 'not', 'propertyNames', 'if', 'then', 'else', ...BOOLEAN_VALUED];
const CONSTRAINING = new Set([
  'type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength',
  'pattern', 'format', 'maxItems', 'minItems', 'uniqueItems', 'contains', 'items', 'prefixItems', 'maxProperties', 'minProperties',
  'required', 'properties', 'patternProperties', 'additionalProperties', 'propertyNames', 'dependentRequired', 'dependentSchemas',
  'allOf', 'anyOf', 'oneOf', 'not', '$ref',
]);

/** Inspector's portability findings for one schema: `rule at path`. */
function findings(node: unknown, path = '', keyword?: string): string[] {
  if (typeof node === 'boolean') return keyword !== undefined && BOOLEAN_VALUED.has(keyword) ? [] : [`boolean-schema at ${path}`];
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return [];
  const n = node as Record<string, unknown>;
  const out: string[] = [];
  if (Array.isArray(n['type'])) out.push(`type-union at ${path}`);
  if (typeof n['$ref'] === 'string' && !n['$ref'].startsWith('#')) out.push(`remote-ref at ${path}`);
  const constrains = Object.keys(n).some((k) => CONSTRAINING.has(k)) || ('if' in n && ('then' in n || 'else' in n));
  if (!constrains && keyword !== 'not') out.push(`untyped-schema at ${path}`);
  for (const k of MAPS) for (const [name, sub] of Object.entries((n[k] as Record<string, unknown> | undefined) ?? {})) out.push(...findings(sub, `${path}.${k}.${name}`, k));
  for (const k of ARRAYS) ((n[k] as unknown[] | undefined) ?? []).forEach((sub, i) => out.push(...findings(sub, `${path}.${k}[${i}]`, k)));
  for (const k of SINGLE) if (k in n) out.push(...findings(n[k], `${path}.${k}`, k));
  return out;
}

test('the MCP outputSchema draws none of MCP Inspector --strict portability findings', () => {
  assert.deepEqual(findings(TOOL_OUTPUT_JSON_SCHEMA, 'outputSchema'), []);
});

test('the lint restated here finds what Inspector found in the schema before', () => {
  const before = { type: 'object', properties: { data: { description: 'd' }, module: { type: ['string', 'null'] } }, additionalProperties: {} };
  assert.deepEqual(findings(before, 's').sort(), ['type-union at s.properties.module', 'untyped-schema at s.additionalProperties', 'untyped-schema at s.properties.data']);
  // portableJsonSchema rewrites what it can without changing the meaning; an accept-anything property is left to declare.
  assert.deepEqual(findings(portableJsonSchema(before), 's'), ['untyped-schema at s.properties.data']);
});

test('every action’s data is a JSON object, as the outputSchema declares it', () => {
  for (const [id, shape] of Object.entries(ACTION_DATA_SHAPES)) {
    assert.equal(selfContainedJsonSchema(shape).type, 'object', id);
  }
});
