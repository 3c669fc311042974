/**
 * `project-cli --help` and `project-cli <module> <method> --help`: the action
 * list and each action's flags and input schema, as text. Help needs no
 * credential (the skills teach the same actions) and is the one exception to
 * "stdout is exactly one JSON document". It is read from argv only, before
 * stdin: the daemon never passes flags, so a model cannot ask for it.
 */
import { ACTION_NAMES, REGISTRY, inputJsonSchema } from './registry.js';
import type { ActionDefinition } from './action.js';

export interface HelpOutcome {
  /** Help goes to stdout (exit 0); a help request for an unknown action is one line on stderr (exit 2). */
  stdout: string;
  stderr: string;
  exitCode: number;
}

const HELP = new Set(['--help', '-h']);

/** The help argv asks for, or null when it asks for a call. */
export function helpFor(argv: readonly string[]): HelpOutcome | null {
  const [first, second, ...rest] = argv;
  if (first === undefined) return null;
  if (argv.length === 1 && (HELP.has(first) || first === 'help')) return ok(renderIndex(ACTION_NAMES));
  if (second !== undefined && HELP.has(second) && !first.startsWith('-')) {
    const names = ACTION_NAMES.filter((n) => n.startsWith(`${first}.`));
    if (names.length === 0) return unknown(`unknown module ${JSON.stringify(first)}`);
    return ok(renderIndex(names));
  }
  if (second === undefined || !rest.some((a) => HELP.has(a)) || first.startsWith('-') || second.startsWith('-')) return null;
  const action = REGISTRY.get(`${first}.${second}`);
  if (!action) return unknown(`unknown action ${JSON.stringify(`${first}.${second}`)}`);
  return ok(renderAction(action));
}

const ok = (text: string): HelpOutcome => ({ stdout: text, stderr: '', exitCode: 0 });
const unknown = (what: string): HelpOutcome => ({
  stdout: '',
  stderr: `project-cli: ${what.slice(0, 120)} (see project-cli --help)\n`,
  exitCode: 2,
});

function renderIndex(names: readonly string[]): string {
  const width = Math.max(...names.map((n) => n.length)) + 3;
  return [
    'project-cli — the restricted CLI behind the project_cli tool: one whitelisted action per call',
    '',
    'usage: project-cli <module> <method> [--field value ...]   (or the input as one JSON object on stdin; flags win)',
    '       project-cli <module> <method> --help               (that action\'s flags and input schema)',
    '',
    'actions:',
    ...names.map((n) => `  ${n.replace('.', ' ').padEnd(width)}${REGISTRY.get(n)!.summary}`),
    '',
    'environment:',
    '  PROJECT_CLI_CREDENTIAL       the controlled credential the daemon issued for this call (required; never a flag)',
    '  PROJECT_CLI_VERIFY_KEY       optional: pin the recorded public key (JWK JSON) the credential must verify with',
    '  PROJECT_CLI_VERIFY_KEY_FILE  the same, from a file',
    '  TOOLGATE_DB                  the database (SQLite file or postgres:// URL)',
    '',
    'stdout is one JSON document: {"ok":true,"module","method","data"} or {"ok":false,…,"error":{code,message,…}}',
    'exit codes: 0 ok · 2 bad usage or input · 3 no/invalid credential · 4 not permitted · 5 not found · 6 conflict · 1 other',
    '',
  ].join('\n');
}

interface Field {
  name: string;
  value: string;
  description: string;
  required: boolean;
}

function renderAction(action: ActionDefinition): string {
  const schema = inputJsonSchema(action);
  const fields = fieldsOf(schema);
  const width = Math.max(0, ...fields.map((f) => `--${f.name.replace(/_/g, '-')} ${f.value}`.length)) + 2;
  const lines = [
    `project-cli ${action.module} ${action.method} — ${action.summary}`,
    '',
    `usage: project-cli ${action.module} ${action.method} [--field value ...]   (or the input as one JSON object on stdin; flags win)`,
    '',
  ];
  if (fields.length > 0) {
    lines.push('flags (each sets the input field of the same name in snake_case; arrays: a,b or a JSON array):');
    for (const f of fields) {
      const left = `--${f.name.replace(/_/g, '-')} ${f.value}`;
      const note = [f.required ? 'required' : '', f.description].filter(Boolean).join('; ');
      lines.push(`  ${left.padEnd(width)}${note}`.trimEnd());
    }
    lines.push('');
  }
  lines.push('input schema (JSON Schema):', compactJson(schema), '');
  return lines.join('\n');
}

interface SchemaNode {
  type?: string | string[];
  format?: string;
  const?: unknown;
  enum?: unknown[];
  description?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  oneOf?: SchemaNode[];
  anyOf?: SchemaNode[];
  items?: SchemaNode;
}

/** Top-level fields across the union's branches; required when every branch requires it. */
function fieldsOf(schema: unknown): Field[] {
  const root = schema as SchemaNode;
  const objects = (root.oneOf ?? root.anyOf ?? [root]).filter((b) => b.properties);
  const fields = new Map<string, { name: string; description: string; values: Set<string>; requiredIn: number }>();
  for (const branch of objects) {
    for (const [name, prop] of Object.entries(branch.properties!)) {
      const field = fields.get(name) ?? { name, description: prop.description ?? '', values: new Set<string>(), requiredIn: 0 };
      field.values.add(valueOf(prop));
      if ((branch.required ?? []).includes(name)) field.requiredIn++;
      fields.set(name, field);
    }
  }
  return [...fields.values()].map((f) => ({
    name: f.name,
    value: [...f.values].join('|'),
    description: f.description,
    required: f.requiredIn === objects.length,
  }));
}

function valueOf(prop: SchemaNode): string {
  if (prop.const !== undefined) return String(prop.const);
  if (prop.enum) return prop.enum.map(String).join('|');
  const alt = prop.anyOf ?? prop.oneOf;
  if (alt) return [...new Set(alt.map(valueOf))].filter((v) => v !== 'NULL').join('|') || 'VALUE';
  if (prop.format) return prop.format.toUpperCase();
  const type = Array.isArray(prop.type) ? prop.type[0] : prop.type;
  if (type === 'array') return `${prop.items ? valueOf(prop.items) : 'VALUE'},...`;
  return (type ?? 'value').toUpperCase();
}

/** Indented JSON whose small objects and arrays stay on one line: short enough to read in a terminal. */
function compactJson(value: unknown, indent = ''): string {
  const flat = JSON.stringify(value);
  if (flat.length <= 90 - indent.length || value === null || typeof value !== 'object') return flat;
  const inner = `${indent}  `;
  if (Array.isArray(value)) return `[\n${value.map((v) => inner + compactJson(v, inner)).join(',\n')}\n${indent}]`;
  const entries = Object.entries(value).map(([k, v]) => `${inner}${JSON.stringify(k)}: ${compactJson(v, inner)}`);
  return `{\n${entries.join(',\n')}\n${indent}}`;
}
