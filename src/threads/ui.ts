import { compileUiSchema } from '../codec/ui-schema-compiler.js';
import type { UiHints } from '../codec/ui-hints.js';

/**
 * The version of what `compileStoredUi` produces: bump it whenever the
 * compiler's output for the same hints changes, so cached compilations
 * (ui-cache.ts) are not served across the change.
 */
export const UI_COMPILER_VERSION = '1';

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
