/**
 * Reading a `--config` file: JSON, or YAML for `.yaml`/`.yml` (the same
 * schema either way), and the one-line errors that name the file, the key
 * and — for syntax — the line.
 */
import { extname } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from './bearer-auth.js';

export function isYamlFile(file: string): boolean {
  return ['.yaml', '.yml'].includes(extname(file).toLowerCase());
}

/** The file's text as a value for the config schema. */
export function parseConfigText(file: string, text: string): unknown {
  if (!isYamlFile(file)) {
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new ConfigError(`config ${file}: not valid JSON (${(err as Error).message})`);
    }
  }
  try {
    // YAML 1.2 core schema: `yes`/`on` stay strings, duplicate keys are an error.
    const value: unknown = parseYaml(text, { prettyErrors: true, uniqueKeys: true });
    // An empty file is "no settings" in YAML; the schema then names what is missing.
    return value === null || value === undefined ? {} : value;
  } catch (err) {
    if (err instanceof YAMLParseError) {
      const at = err.linePos?.[0];
      const reason = err.message.split(' at line ')[0]!.split('\n')[0]!;
      throw new ConfigError(`config ${file}: not valid YAML${at ? ` (line ${at.line}, column ${at.col})` : ''}: ${reason}`);
    }
    throw err;
  }
}

/** `limits.call_timeout_ms: …`, and an unknown key named by its full path. */
export function describeConfigIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => (where ? `${where}.${k}` : k));
    return `unknown key${keys.length > 1 ? 's' : ''} ${keys.join(', ')}`;
  }
  return `${where || '(root)'}: ${issue.message}`;
}
