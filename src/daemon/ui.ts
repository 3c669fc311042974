import { compileUiSchema } from '../codec/ui-schema-compiler.js';
import type { UiHints } from '../codec/ui-hints.js';

/**
 * Compiles stored or fresh `ui_hints` into the `ui_schema` that goes on the
 * wire. Hints read back from the database are trusted only as far as the
 * compiler can use them: a broken row yields no UI rather than an error.
 */
export function compileStoredUi(hints: unknown): unknown {
  if (!hints || typeof hints !== 'object') return undefined;
  try {
    return compileUiSchema(hints as UiHints);
  } catch {
    return undefined;
  }
}
