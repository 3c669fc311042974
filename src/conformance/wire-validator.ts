/**
 * Validates messages against the JSON Schemas in `schemas/` — the published
 * form of the protocol, not our zod source — so what is checked is what a
 * host in any language would check. Shapes are named by their `$defs` id
 * (`ToolResponse`, `HistoryGetResult`, `UiSchema`…).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

interface SchemaDoc {
  $id: string;
  title?: string;
  $defs?: Record<string, unknown>;
}

/** `schemas/` of the package this file belongs to (found upward from here, so src and dist agree). */
function defaultSchemasDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'schemas', 'protocol.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('schemas/ not found');
    dir = parent;
  }
  return join(dir, 'schemas');
}

export class WireValidator {
  private readonly ajv = new Ajv2020({ strict: true, allErrors: true });
  /** Shape id → the schema reference that names it. */
  private readonly refs = new Map<string, string>();
  private readonly compiled = new Map<string, ValidateFunction>();
  /** Every document as read, by file name without `.json`. */
  private readonly docs = new Map<string, SchemaDoc>();

  constructor(dir: string = defaultSchemasDir()) {
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
      const doc = JSON.parse(readFileSync(join(dir, file), 'utf8')) as SchemaDoc;
      this.docs.set(file.slice(0, -'.json'.length), doc);
      // The action input schemas are data the runner compares (error.input_schema), not shapes of messages.
      if (file === 'action-inputs.json') continue;
      this.ajv.addSchema(doc);
      for (const id of Object.keys(doc.$defs ?? {})) this.refs.set(id, `${doc.$id}#/$defs/${id}`);
      // A file whose root is one shape (ui-schema.json → UiSchema) names it by its title.
      if (doc.title && !this.refs.has(doc.title)) this.refs.set(doc.title, doc.$id);
    }
  }

  /** A `$defs` entry of one file exactly as published, or undefined. */
  definition(file: string, id: string): unknown {
    const defs = this.docs.get(file)?.$defs;
    return defs && Object.hasOwn(defs, id) ? defs[id] : undefined;
  }

  has(shape: string): boolean {
    return this.refs.has(shape);
  }

  /** The problems of `value` as a `shape`, each `<instance path> <message>`; empty when it is valid. */
  check(shape: string, value: unknown): string[] {
    let validate = this.compiled.get(shape);
    if (!validate) {
      const ref = this.refs.get(shape);
      if (!ref) return [`no schema for ${shape}`];
      validate = this.ajv.getSchema(ref);
      if (!validate) return [`no schema at ${ref}`];
      this.compiled.set(shape, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`);
  }
}
