import { z } from 'zod';
import { ACTION_NAMES, actionSpec, type ActionName } from '../protocol/action-table.js';
import type { ActionDefinition, ActionHandlers } from './action.js';
import { calendarHandlers } from './modules/calendar.js';
import { contactsHandlers } from './modules/contacts.js';
import { memoryHandlers } from './modules/memory.js';

/** Every action's handler: the table's names, each implemented once (a missing one fails to compile). */
const HANDLERS: ActionHandlers = { ...calendarHandlers, ...contactsHandlers, ...memoryHandlers };

function definitionOf(name: ActionName): ActionDefinition {
  const spec = actionSpec(name)!;
  const dot = name.indexOf('.');
  return {
    module: name.slice(0, dot),
    method: name.slice(dot + 1),
    summary: spec.description,
    // Built on first read (the table's `once`): project-cli builds only the schemas of the action it runs.
    get input() {
      return spec.input();
    },
    get describedBy() {
      return spec.describedBy?.();
    },
    run: HANDLERS[name] as ActionDefinition['run'],
  };
}

/** The registry: the action table's entries with their handlers, keyed `module.method`. */
export const REGISTRY: ReadonlyMap<string, ActionDefinition> = new Map(ACTION_NAMES.map((name) => [name, definitionOf(name)]));

/** Every action's name, sorted (the table's, typed as plain strings for callers that test any name). */
const NAMES: readonly string[] = ACTION_NAMES;
export { NAMES as ACTION_NAMES };

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
