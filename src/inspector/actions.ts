/**
 * The action matrix, as the call form suggests it. The names and example
 * inputs are the action table's (src/protocol/action-table.ts): the bundler
 * evaluates them at build time (scripts/bundle-inspector.mjs), so the
 * inspector never carries a copy that could drift from the actions that exist.
 */
import { ACTION_EXAMPLES, ACTION_NAMES } from '../protocol/action-table.js';

export { ACTION_NAMES };

/** `calendar.*` → every calendar action; `*` → all; exact names stay as they are. */
export function expandAllowed(allowed: readonly string[]): string[] {
  const out = new Set<string>();
  for (const pattern of allowed) {
    if (pattern === '*') {
      for (const a of ACTION_NAMES) out.add(a);
    } else if (pattern.endsWith('.*')) {
      const prefix = pattern.slice(0, -1);
      const matched = ACTION_NAMES.filter((a) => a.startsWith(prefix));
      if (matched.length > 0) for (const a of matched) out.add(a);
      else out.add(pattern); // an unknown module: suggest the module only
    } else {
      out.add(pattern);
    }
  }
  return [...out];
}

/** Modules and, for one module, methods to suggest (from the session's actions, else all). */
export function suggestions(allowed: readonly string[], module: string): { modules: string[]; methods: string[] } {
  const source: readonly string[] = allowed.length > 0 ? allowed : ACTION_NAMES;
  const modules = [...new Set(source.map((a) => a.split('.')[0] ?? '').filter(Boolean))];
  const methods = source
    .filter((a) => !module || a.startsWith(`${module}.`))
    .map((a) => a.slice(a.indexOf('.') + 1))
    .filter((m) => m && m !== '*');
  return { modules, methods: [...new Set(methods)] };
}

/**
 * Example inputs shown under the JSON field (never filled in without asking):
 * illustrations for a person, keyed by action.
 */
export const EXAMPLES: Readonly<Record<string, unknown>> = ACTION_EXAMPLES;
