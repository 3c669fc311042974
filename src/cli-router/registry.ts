import { z } from 'zod';
import type { ActionDefinition } from './action.js';
import { calendarActions } from './modules/calendar.js';
import { contactsActions } from './modules/contacts.js';
import { memoryActions } from './modules/memory.js';

const ALL: readonly ActionDefinition[] = [...calendarActions, ...contactsActions, ...memoryActions];

/** The registry: the only actions that exist. Keyed `module.method`. */
export const REGISTRY: ReadonlyMap<string, ActionDefinition> = new Map(ALL.map((a) => [`${a.module}.${a.method}`, a]));

export const ACTION_NAMES: readonly string[] = [...REGISTRY.keys()].sort();

export function lookupAction(module: string, method: string): ActionDefinition | undefined {
  return REGISTRY.get(`${module}.${method}`);
}

const jsonSchemaCache = new Map<string, unknown>();

/**
 * JSON Schema of an action's input, derived from its zod schema (cached) and
 * kept short for a model to read: a string with a `format` ("date",
 * "date-time") and a description needs no 300-character regex beside them.
 */
export function inputJsonSchema(action: ActionDefinition): unknown {
  const name = `${action.module}.${action.method}`;
  let schema = jsonSchemaCache.get(name);
  if (!schema) {
    const { $schema: _dialect, ...full } = z.toJSONSchema(action.describedBy ?? action.input, { io: 'input', unrepresentable: 'any' });
    schema = concise(full);
    jsonSchemaCache.set(name, schema);
  }
  return schema;
}

function concise(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(concise);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'pattern' && 'format' in node) continue;
    out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, concise(v)])) : concise(value);
  }
  return out;
}
