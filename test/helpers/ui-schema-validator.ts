/**
 * Validates values against `schemas/ui-schema.json` (JSON Schema 2020-12) with ajv, in strict
 * mode, so a schema keyword ajv does not understand fails loudly instead of being ignored.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';

/**
 * The repository root: the nearest directory above this file holding both package.json and
 * tsconfig.json (dist/ may get a copy of package.json when a source imports it). Works from the
 * TypeScript source and from the compiled copy under dist/.
 */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!(existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'tsconfig.json')))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('repository root (package.json + tsconfig.json) not found');
    dir = parent;
  }
  return dir;
}

export type UiSchemaValidation = { ok: true } | { ok: false; errors: string[] };

const schema: unknown = JSON.parse(readFileSync(join(repoRoot(), 'schemas', 'ui-schema.json'), 'utf8'));
const ajv = new Ajv2020({ strict: true, allErrors: true });
const validate = ajv.compile(schema as object);

/** Checks `value` against schemas/ui-schema.json; errors read `<instancePath> <message>`. */
export function validateUiSchema(value: unknown): UiSchemaValidation {
  if (validate(value)) return { ok: true };
  const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`);
  return { ok: false, errors };
}
