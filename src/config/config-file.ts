/**
 * Reading a `--config` file: JSON, or YAML for `.yaml`/`.yml` (the same
 * schema either way), and the one-line errors that name the file, the key
 * and — for syntax — the line. The read is bounded (a regular file of at
 * most 1 MiB), a UTF-8 byte-order mark is accepted, and YAML is parsed with
 * its alias limit and without custom tags.
 */
import { extname } from 'node:path';
import { parseDocument, type YAMLError } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from './config-error.js';
import { BoundedFileError, readBoundedFile } from '../cli-router/bounded-file.js';
import { closestName } from '../codec/closest-name.js';
import { ConfigFile as ConfigSchema } from '../protocol/config.js';

/** YAML aliases (`*name`) a document may resolve; more is refused as an alias bomb. */
const MAX_YAML_ALIASES = 100;

function isYamlFile(file: string): boolean {
  return ['.yaml', '.yml'].includes(extname(file).toLowerCase());
}

/**
 * The file's text, read in full only when it is a regular file of at most
 * MAX_FILE_BYTES (`/dev/zero`, a FIFO or a directory is refused before it is
 * opened; a file that grows while it is read stops at the limit + 1 byte).
 */
export function readConfigText(file: string): string {
  try {
    return readBoundedFile(file);
  } catch (err) {
    if (err instanceof BoundedFileError) throw new ConfigError(`config ${file}: ${err.message}`);
    throw err;
  }
}

/** The file's text as a value for the config schema. */
export function parseConfigText(file: string, text: string): unknown {
  // Editors on Windows save UTF-8 with a byte-order mark; it is not part of the document.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (!isYamlFile(file)) {
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new ConfigError(`config ${file}: not valid JSON${jsonErrorAt(text, (err as Error).message)}`);
    }
  }
  // YAML 1.2 core schema: `yes`/`on` stay strings, duplicate keys are an error. A tag the
  // schema does not know (`!!js/function`, `!foo`) is a warning to the library, a refusal
  // here: a configuration is plain data.
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true, logLevel: 'silent' });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw yamlError(file, problem);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (err) {
    if (err instanceof ReferenceError) {
      throw new ConfigError(`config ${file}: not valid YAML: more than ${MAX_YAML_ALIASES} alias expansions (an alias bomb?)`);
    }
    throw err;
  }
  // An empty file is "no settings" in YAML; the schema then names what is missing.
  return value === null || value === undefined ? {} : value;
}

/**
 * The path of the first key named `__proto__` in a parsed file (depth first),
 * or null. JSON.parse and YAML keep it as an ordinary own key, but zod's
 * records skip it: left alone, a quota, a per-action timeout or a profile of
 * that name would vanish without a word instead of being refused like any
 * other key that names nothing.
 */
export function protoKeyPath(value: unknown, path: readonly string[] = []): string | null {
  if (value === null || typeof value !== 'object') return null;
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [key, v] of entries) {
    if (key === '__proto__') return [...path, key].join('.');
    const found = protoKeyPath(v, [...path, key]);
    if (found !== null) return found;
  }
  return null;
}

/**
 * ` (line L, column C): reason` from JSON.parse's message, whose only
 * place is a character offset on Node 20 ("… in JSON at position 42").
 */
function jsonErrorAt(text: string, message: string): string {
  // V8 quotes the text around the mistake (`Unexpected token 'e', ..."ons": [secr"... is not valid JSON`): a
  // cut piece of whatever stood there — a token, a secret — that no scan could know for one. The line and
  // column say where; the excerpt is dropped.
  const reason = message
    .replace(/\s*\(line \d+ column \d+\)/, '')
    .replace(/\s+in JSON at position \d+/, '')
    .replace(/^JSON\.parse: /, '')
    .replace(/,\s*(\.\.\.)?"[\s\S]*"(\.\.\.)? is not valid JSON$/, '');
  const position = /at position (\d+)/.exec(message);
  if (!position) return ` (${reason})`;
  const before = text.slice(0, Number(position[1]));
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return ` (line ${line}, column ${column}): ${reason}`;
}

function yamlError(file: string, err: YAMLError): ConfigError {
  const at = err.linePos?.[0];
  const reason = err.message.split(' at line ')[0]!.split('\n')[0]!;
  return new ConfigError(`config ${file}: not valid YAML${at ? ` (line ${at.line}, column ${at.col})` : ''}: ${reason}`);
}

/**
 * The first problem of a failed parse, one line. An unknown key wins over a
 * missing one — `allowed_action` is named, with the key it was probably meant
 * to be, rather than reported as `allowed_actions` missing.
 */
export function describeConfigIssues(issues: readonly z.core.$ZodIssue[]): string {
  const unknown = issues.find((i) => i.code === 'unrecognized_keys');
  if (unknown?.code !== 'unrecognized_keys') return describeConfigIssue(issues[0]!);
  const parent = unknown.path.map(String).join('.');
  const missing = issues
    .filter((i) => i.code === 'invalid_type' && i.path.length === unknown.path.length + 1 && i.path.slice(0, -1).map(String).join('.') === parent)
    .filter((i) => i.message.endsWith('received undefined'))
    .map((i) => String(i.path.at(-1)));
  let hint = missing.length > 0 ? ` (did you mean ${missing.map((k) => (parent ? `${parent}.${k}` : k)).join(', ')}?)` : '';
  if (!hint) {
    const known = knownKeysAt(unknown.path);
    const meant = unknown.keys.map((k) => closestName(k, known.filter((n) => !unknown.keys.includes(n)))).filter((k) => k !== undefined);
    if (meant.length > 0) hint = ` (did you mean ${meant.map((k) => (parent ? `${parent}.${k}` : k)).join(', ')}?)`;
  }
  return describeConfigIssue(unknown) + hint;
}

/** The keys the config schema knows at `path` (an object's), for "did you mean". */
function knownKeysAt(path: readonly PropertyKey[]): string[] {
  let node: unknown = ConfigSchema;
  const unwrap = (n: unknown): unknown => {
    for (let i = 0; i < 8; i++) {
      const def = (n as { _zod?: { def?: { type?: string; innerType?: unknown } } })._zod?.def;
      if (def && (def.type === 'optional' || def.type === 'nullable' || def.type === 'default' || def.type === 'pipe') && def.innerType) n = def.innerType;
      else break;
    }
    return n;
  };
  for (const seg of path) {
    node = unwrap(node);
    const def = (node as { _zod?: { def?: { type?: string; shape?: Record<string, unknown>; valueType?: unknown } } })._zod?.def;
    if (def?.type === 'object' && def.shape) node = def.shape[String(seg)];
    else if (def?.type === 'record') node = def.valueType;
    else return [];
  }
  const def = (unwrap(node) as { _zod?: { def?: { type?: string; shape?: Record<string, unknown> } } })._zod?.def;
  return def?.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}

/** `limits.call_timeout_ms: …`, and an unknown key named by its full path. */
function describeConfigIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => (where ? `${where}.${k}` : k));
    return `unknown key${keys.length > 1 ? 's' : ''} ${keys.join(', ')}`;
  }
  if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) {
    if (where === 'agents') {
      return 'no "agents": a config needs at least one agent profile, e.g. {"agents": {"default": {"enabled_skills": ["calendar"], "allowed_actions": ["calendar.*"]}}} (see toolgate.config.example.json)';
    }
    return `${where || '(root)'} is missing (it is required here)`;
  }
  return `${where || '(root)'}: ${issue.message}`;
}
