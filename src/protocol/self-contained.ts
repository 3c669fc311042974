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
