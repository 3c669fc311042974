/**
 * Validates values against `schemas/ui-schema.json` (JSON Schema 2020-12) with ajv, in strict
 * mode, so a schema keyword ajv does not understand fails loudly instead of being ignored.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './repo.js';
import { Ajv2020 } from 'ajv/dist/2020.js';

export type UiSchemaValidation = { ok: true } | { ok: false; errors: string[] };

const schema: unknown = JSON.parse(readFileSync(join(REPO_ROOT, 'schemas', 'ui-schema.json'), 'utf8'));
const ajv = new Ajv2020({ strict: true, allErrors: true });
const validate = ajv.compile(schema as object);

/** Checks `value` against schemas/ui-schema.json; errors read `<instancePath> <message>`. */
export function validateUiSchema(value: unknown): UiSchemaValidation {
  if (validate(value)) return { ok: true };
  const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`);
  return { ok: false, errors };
}
