/**
 * The registry every named wire shape is declared into. `npm run gen` turns it
 * into the JSON Schemas of `schemas/` (one file per concern, each shape a
 * `$defs` entry named by its id), so a shape is written once, here, in zod.
 *
 * Nothing in src/protocol imports the rest of the code base: it is the bottom
 * layer, and the conformance runner and hosts may depend on it alone.
 */
import { z } from 'zod';

/** The schema files under `schemas/`, without `.json`. */
export type SchemaFile = 'tool-call' | 'ui-schema' | 'protocol' | 'actions' | 'cli-output' | 'config';

export interface ShapeMeta {
  /** The `$defs` key in its schema file; also the JSON-RPC reference other files use. */
  id: string;
  /** The TypeScript type name the host-facing `.d.ts` gives the shape. */
  title: string;
  description?: string;
}

/**
 * Zod's global registry: it also holds the `.describe()` texts of fields, which
 * the JSON Schemas keep. Only shapes with an `id` become `$defs` entries.
 */
export const protocolRegistry = z.globalRegistry;

/** Which file each registered id is written to. */
export const schemaFileOf = new Map<string, SchemaFile>();

/**
 * Registers `schema` as the named shape `id` of `file`. Returns the schema
 * itself, so a declaration reads `export const Foo = named('protocol', 'Foo', z.…)`.
 */
export function named<T extends z.ZodType>(file: SchemaFile, id: string, schema: T, description?: string, title: string = id): T {
  if (schemaFileOf.has(id)) throw new Error(`wire shape ${id} is declared twice`);
  schemaFileOf.set(id, file);
  protocolRegistry.add(schema, description === undefined ? { id, title } : { id, title, description });
  return schema;
}
