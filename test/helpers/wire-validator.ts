/**
 * Validates live wire messages against schemas/ — the JSON Schemas generated
 * from src/protocol — with the conformance runner's validator, so the suite
 * and the runner check the same thing.
 */
import { join } from 'node:path';
import { WireValidator } from '../../src/conformance/wire-validator.js';
import { REQUESTS } from '../../src/protocol/methods.js';
import { REPO_ROOT } from './repo.js';

const validator = new WireValidator(join(REPO_ROOT, 'schemas'));

/** A shape id of schemas/: `ToolResponse`, `ToolResultNotification`, `HistoryGetResult`, `UiSchema`… */
export type WireShape = string;

/** Throws with ajv's messages when `value` is not a valid `shape`. */
export function assertWireShape(shape: WireShape, value: unknown): void {
  const errors = validator.check(shape, value);
  if (errors.length > 0) {
    throw new Error(`${shape} does not match schemas/: ${errors.join('; ')}\n${JSON.stringify(value).slice(0, 500)}`);
  }
}

/** The result shape of each request method (schemas/protocol.json), from the protocol's method table. */
export const RESULT_SHAPE: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(REQUESTS).map(([method, spec]) => [method, spec.resultId]),
);

/** Validates the result of `method` against its schema; unknown methods are an error. */
export function assertResultShape(method: string, value: unknown): void {
  const shape = RESULT_SHAPE[method];
  if (!shape) throw new Error(`no result schema for ${method}`);
  assertWireShape(shape, value);
}
