/**
 * A wire shape as ONE JSON Schema without `$defs`/`$ref`, for consumers that
 * do not resolve references (MCP's `outputSchema`: the SDK and many clients
 * look at the root's `type`/`anyOf` only). Generated from the same zod
 * declaration as `schemas/`, then every local `#/$defs/X` reference is
 * replaced by the definition it names, so the copy cannot drift.
 */
import { z } from 'zod';

type Json = Record<string, unknown>;

export function selfContainedJsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'output'): Json {
  const { $defs, ...root } = z.toJSONSchema(schema, { target: 'draft-2020-12', io }) as Json & { $defs?: Record<string, Json> };
  const defs = $defs ?? {};
  const inline = (node: unknown, seen: readonly string[]): unknown => {
    if (Array.isArray(node)) return node.map((n) => inline(n, seen));
    if (node === null || typeof node !== 'object') return node;
    const { $ref, ...rest } = node as Json;
    const out: Json = {};
    if (typeof $ref === 'string') {
      const name = /^#\/\$defs\/([^/]+)$/.exec($ref)?.[1];
      if (name === undefined || !Object.hasOwn(defs, name)) throw new Error(`cannot inline ${$ref}`);
      if (seen.includes(name)) throw new Error(`${name} refers to itself: it has no self-contained form`);
      Object.assign(out, inline(defs[name], [...seen, name]));
    }
    for (const [key, value] of Object.entries(rest)) out[key] = inline(value, seen);
    return out;
  };
  return inline(root, []) as Json;
}

/** Keywords whose value may be a bare boolean schema (`true`/`false`) in every client's dialect. */
const BOOLEAN_VALUED = new Set(['additionalProperties', 'unevaluatedProperties', 'additionalItems', 'unevaluatedItems']);

/** Keywords that say something about the value; a schema with none of them accepts anything. */
const CONSTRAINING = new Set([
  'type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum',
  'maxLength', 'minLength', 'pattern', 'format', 'maxItems', 'minItems', 'uniqueItems', 'contains', 'items', 'prefixItems',
  'maxProperties', 'minProperties', 'required', 'properties', 'patternProperties', 'additionalProperties',
  'propertyNames', 'dependentRequired', 'dependentSchemas', 'allOf', 'anyOf', 'oneOf', 'not', '$ref', 'if',
]);

/**
 * The same JSON Schema written in the spelling every tool-schema consumer reads
 * alike (the checks of MCP Inspector's `--strict`, which map onto single-`type`
 * dialects such as the OpenAPI subset of Gemini function declarations), with
 * the same meaning:
 * - `type: ["string", "null"]` becomes `anyOf: [{type: "string"}, {type: "null"}]`;
 * - an accept-anything schema (`{}`, annotations only) under `additionalProperties`
 *   and its kin becomes `true`.
 * What cannot be rewritten without changing the contract (an accept-anything
 * schema in a property) is left for the caller to declare.
 */
export function portableJsonSchema(node: unknown, keyword?: string): unknown {
  if (Array.isArray(node)) return node.map((n) => portableJsonSchema(n));
  if (node === null || typeof node !== 'object') return node;
  const src = node as Json;
  if (keyword !== undefined && BOOLEAN_VALUED.has(keyword) && !Object.keys(src).some((k) => CONSTRAINING.has(k))) return true;
  const out: Json = {};
  for (const [key, value] of Object.entries(src)) {
    if (key === 'type' && Array.isArray(value)) {
      if ('anyOf' in src) throw new Error('a type union beside anyOf has no portable spelling here');
      out['anyOf'] = value.map((type) => ({ type }));
      continue;
    }
    out[key] = portableJsonSchema(value, key);
  }
  return out;
}
