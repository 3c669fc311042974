/**
 * The action matrix, as the call form suggests it. The list is the CLI
 * router's registry itself (`ACTION_NAMES`): the bundler evaluates it at build
 * time (scripts/bundle-inspector.mjs), so the inspector never carries a copy
 * that could drift from the actions that exist.
 */
import { ACTION_NAMES } from '../cli-router/registry.js';

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
  const source = allowed.length > 0 ? allowed : ACTION_NAMES;
  const modules = [...new Set(source.map((a) => a.split('.')[0] ?? '').filter(Boolean))];
  const methods = source
    .filter((a) => !module || a.startsWith(`${module}.`))
    .map((a) => a.slice(a.indexOf('.') + 1))
    .filter((m) => m && m !== '*');
  return { modules, methods: [...new Set(methods)] };
}

/**
 * Example inputs shown under the JSON field (never filled in without asking).
 * Illustrations for a person, keyed by action; an action without one shows none.
 */
export const EXAMPLES: Readonly<Record<string, unknown>> = {
  'calendar.read': { mode: 'day', date: '2026-04-21' },
  'calendar.create': { title: 'Design review', start_at: '2026-04-21T10:00:00+08:00', end_at: '2026-04-21T11:00:00+08:00' },
  'calendar.update': { event_id: 'evt_…', title: 'New title' },
  'calendar.delete': { event_id: 'evt_…' },
  'calendar.share': { event_id: 'evt_…', user_ids: ['user_…'] },
  'calendar.accept_invite': { invite_id: 'inv_…' },
  'calendar.reject_invite': { invite_id: 'inv_…' },
  'contacts.read': { query: 'Bob' },
  'memory.update': { key: 'standup', content: 'Daily standup is at 09:30.' },
  'memory.forget': { key: 'standup' },
  'memory.read': {},
};
