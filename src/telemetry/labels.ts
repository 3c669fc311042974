/**
 * Label values from bounded sets only: the action comes from the action
 * table, never verbatim from the client (metrics and span attributes alike).
 */
import { lookupAction } from '../cli-router/registry.js';

/** `module.method` when the action table has it, else `unknown`: a client's string never becomes a label. */
export function actionLabel(module: unknown, method: unknown): string {
  if (typeof module !== 'string' || typeof method !== 'string') return 'unknown';
  return lookupAction(module, method) ? `${module}.${method}` : 'unknown';
}
