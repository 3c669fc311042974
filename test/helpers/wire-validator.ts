/**
 * Validates live wire messages against schemas/tool-call.json, the single
 * declaration of the call's shapes (the TypeScript types are generated from it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { REPO_ROOT } from './repo.js';

const schema = JSON.parse(readFileSync(join(REPO_ROOT, 'schemas', 'tool-call.json'), 'utf8')) as { $id: string };
const ajv = new Ajv2020({ strict: true, allErrors: true });
ajv.addSchema(schema);

export type WireShape = 'ToolResponse' | 'ToolResultNotification' | 'ToolAgentOutput';

/** Throws with ajv's messages when `value` is not a valid `shape`. */
export function assertWireShape(shape: WireShape, value: unknown): void {
  const validate = ajv.getSchema(`${schema.$id}#/$defs/${shape}`);
  if (!validate) throw new Error(`no schema for ${shape}`);
  if (!validate(value)) {
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`);
    throw new Error(`${shape} does not match schemas/tool-call.json: ${errors.join('; ')}\n${JSON.stringify(value).slice(0, 500)}`);
  }
}
