import { parseArgs } from 'node:util';
import { offersCredential } from '../codec/redact.js';

/** Flags that would carry a credential: refused wherever they appear. */
const CREDENTIAL_FLAG = /^--?(credential|token|bearer|access-token|access_token|api-key|jwt)(=|$)/i;

export function offersCredentialByFlag(argv: readonly string[]): boolean {
  return argv.some((a) => CREDENTIAL_FLAG.test(a));
}

/** A credential field at any depth, or a token anywhere in the input's text (codec/secret-scan.ts). */
export function offersCredentialInInput(input: Record<string, unknown>): boolean {
  return offersCredential(input);
}

export class UsageError extends Error {
  override name = 'UsageError';
}

/** What the JSON Schema of an input says about one top-level property. */
type PropertyKind = 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object';

/**
 * Top-level properties of an input JSON Schema, across union branches
 * (`oneOf`/`anyOf`), with the kind a flag value should be coerced to.
 */
export function flagKinds(schema: unknown): Map<string, PropertyKind> {
  const kinds = new Map<string, PropertyKind>();
  const visit = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const n = node as { properties?: Record<string, { type?: unknown }>; oneOf?: unknown[]; anyOf?: unknown[] };
    for (const [name, prop] of Object.entries(n.properties ?? {})) {
      const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== 'null') : prop.type;
      if (!kinds.has(name)) kinds.set(name, typeof type === 'string' ? (type as PropertyKind) : 'string');
    }
    for (const branch of [...(n.oneOf ?? []), ...(n.anyOf ?? [])]) visit(branch);
  };
  visit(schema);
  return kinds;
}

const kebab = (snake: string) => snake.replace(/_/g, '-');

/**
 * Parses `--kebab-case value` flags into a snake_case input object, coercing
 * each value by the property's schema type. Unknown flags are usage errors.
 * Values are only ever data: nothing here is interpreted by a shell.
 */
export function parseFlags(args: readonly string[], kinds: Map<string, PropertyKind>): Record<string, unknown> {
  const options: Record<string, { type: 'string'; multiple?: boolean }> = {};
  for (const [name, kind] of kinds) options[kebab(name)] = { type: 'string', multiple: kind === 'array' };
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: [...args], options, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const input: Record<string, unknown> = {};
  for (const [name, kind] of kinds) {
    const raw = values[kebab(name)];
    if (raw === undefined || typeof raw === 'boolean') continue;
    input[name] = coerce(raw, kind);
  }
  return input;
}

function coerce(raw: string | string[], kind: PropertyKind): unknown {
  if (kind === 'array') {
    const list = Array.isArray(raw) ? raw : [raw];
    // `--user-ids '["a","b"]'` or `--user-ids a,b` or `--user-ids a --user-ids b`.
    if (list.length === 1 && list[0]!.trimStart().startsWith('[')) return parseJsonOr(list[0]!);
    return list.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v.length > 0);
  }
  const value = Array.isArray(raw) ? raw[raw.length - 1]! : raw;
  switch (kind) {
    case 'number':
    case 'integer':
      return value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
    case 'boolean':
      return value === 'true' ? true : value === 'false' ? false : value;
    case 'object':
      return parseJsonOr(value);
    default:
      return value;
  }
}

function parseJsonOr(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
