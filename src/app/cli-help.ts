/**
 * The mechanism behind `toolgate <command> --help` and its usage errors. A
 * command is data (a CommandSpec: what it does, its flags with defaults, the
 * environment it reads, examples); the same data declares the flags to
 * `node:util` parseArgs, so help and parser cannot drift apart.
 */
import { parseArgs } from 'node:util';
import { closestName as closestFlag } from '../codec/closest-name.js';
import { findSecret } from '../codec/secret-scan.js';

export interface FlagSpec {
  type: 'string' | 'boolean';
  /** Placeholder for the value in help (`N`, `FILE`, …); string flags only. */
  value?: string;
  /** The default as a person would write it; omitted when there is none. */
  default?: string;
  description: string;
  multiple?: boolean;
}

/** Environment variables the commands read, with one line each. */
export const ENVIRONMENT = {
  TOOLGATE_DB: 'SQLite file or postgres:// URL (--db wins); default toolgate.db in the data folder',
  PGPASSWORD: 'the password of a postgres:// TOOLGATE_DB / --db URL that has none (keeps it out of the URL and of ps)',
  TOOLGATE_HOME: 'the data folder (keys, dev secret, default database); else $XDG_DATA_HOME/toolgate, else ~/.local/share/toolgate',
  TOOLGATE_BEARER_SECRET: 'HS256 secret that user bearer tokens are verified (and dev tokens signed) with',
  TOOLGATE_BEARER_JWKS: 'path of a JWKS file with the token issuer\'s public keys (instead of a secret)',
  TOOLGATE_BEARER_ISSUER: 'when set, bearer tokens must carry this `iss`',
  TOOLGATE_BEARER_AUDIENCE: 'when set, bearer tokens must carry this `aud`',
  TOOLGATE_SERVICE_KEY: 'secret a WebSocket client presents in `initialize` to act as a trusted backend',
  TOOLGATE_CREDENTIAL_KEY_FILE: 'private JWK the controlled credentials are signed with; default: generated in the data folder',
  TOOLGATE_MCP_TOKEN: 'serve --mcp: the bearer token of the user the MCP server acts for',
  TOOLGATE_MCP_AGENT: 'serve --mcp: the agent profile of the MCP session (default: mcp.agent in the config, else default)',
  TOOLGATE_LOG_LEVEL: 'debug | info | warn | error (default info); logs are JSON lines on stderr',
  OTEL_TRACES_EXPORTER: 'otlp or console turns tracing on (with the other OTEL_* variables); unset or none: no tracing',
  TOOLGATE_CLI_SNAPSHOT: 'subprocess executor: off starts project-cli from its bundle, a path uses that start-up snapshot; unset: the checked snapshot',
} as const;
export type EnvName = keyof typeof ENVIRONMENT;

export interface CommandSpec<F extends Record<string, FlagSpec> = Record<string, FlagSpec>> {
  /** As typed after `toolgate`: `serve`, `automation add`. */
  name: string;
  /** One line for the top-level help. */
  summary: string;
  /** Synopsis lines, without the leading `toolgate`. */
  usage: string[];
  /** A short paragraph: what it does, what it prints. */
  description: string;
  flags: F;
  env: readonly EnvName[];
  examples: string[];
}

/** A mistake in how a command was called: one line on stderr, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
  constructor(
    message: string,
    /** The command whose `--help` the line points to, when known. */
    readonly command?: string,
  ) {
    super(message);
  }
}

/** The parsed flags of a spec, typed from it: a boolean flag is true or absent, a string flag its value. */
export type FlagValues<F extends Record<string, FlagSpec>> = {
  [K in keyof F]?: F[K]['type'] extends 'boolean' ? boolean : F[K]['multiple'] extends true ? string[] : string;
};

/**
 * Parses a command's flags by its spec. Returns null when `--help`/`-h` was
 * asked for (the help is already on stdout); every parser complaint becomes
 * a UsageError with a sentence of ours instead of Node's text.
 */
export function parseCommand<F extends Record<string, FlagSpec>>(
  spec: CommandSpec<F>,
  args: readonly string[],
  out: { write(text: string): unknown } = process.stdout,
  /** The configured secrets an echo must not show (asked only when a mistake is reported). */
  secrets: () => readonly string[] = () => [],
): FlagValues<F> | null {
  if (args.includes('--help') || args.includes('-h')) {
    out.write(renderHelp(spec));
    return null;
  }
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {};
  for (const [name, flag] of Object.entries(spec.flags)) options[name] = { type: flag.type, ...(flag.multiple ? { multiple: true } : {}) };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: joinNegativeValues(args, spec), options, strict: true, allowPositionals: false, tokens: true });
  } catch (err) {
    throw new UsageError(parserMessage(err as Error, Object.keys(spec.flags), secrets()), spec.name);
  }
  // parseArgs keeps the last of a repeated single-value flag: `--user a --user b` would act for b unsaid.
  const seen = new Set<string>();
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option' || spec.flags[token.name]?.type !== 'string' || spec.flags[token.name]?.multiple) continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} given twice: give it once`, spec.name);
    seen.add(token.name);
  }
  return parsed.values as FlagValues<F>;
}

/** `--ttl -5` means the value -5 (then judged by the command), not a flag named `-5`. */
function joinNegativeValues(args: readonly string[], spec: CommandSpec<Record<string, FlagSpec>>): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const flag = a.startsWith('--') ? spec.flags[a.slice(2)] : undefined;
    const next = args[i + 1];
    if (flag?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** The known flag a mistyped one most likely meant (closest-name.ts). */
export { closestFlag };

function parserMessage(err: Error & { code?: string }, known: readonly string[] = [], secrets: readonly string[] = []): string {
  const quoted = /'([^']*)'/.exec(err.message)?.[1] ?? '';
  const flag = quoted.split(' ')[0]!;
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
    {
      const meant = flag.startsWith('--') ? closestFlag(flag.slice(2), known) : undefined;
      return `unknown flag ${printable(flag, secrets)}${meant ? ` — did you mean --${meant}?` : ''}`;
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${JSON.stringify(printable(quoted, secrets))}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /does not take an argument/.test(err.message) ? `${flag} takes no value` : `${flag} needs a value`;
    default:
      return printable(err.message.split('\n')[0]!, secrets);
  }
}

/**
 * What a user typed, safe to echo on one line: text carrying a token (secret-scan.ts) or one of the
 * configured `secrets` (auth/local-secrets.ts) is `[redacted]` whole, since a cut echo of it would still
 * show its start (contract sections 5 and 7).
 */
export function printable(text: string, secrets: readonly string[] = []): string {
  if (findSecret(text, secrets) !== null) return '[redacted]';
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length > 80 ? `${clean.slice(0, 77)}...` : clean;
}

/** `toolgate <command> --help`. */
export function renderHelp(spec: CommandSpec): string {
  const lines = [`toolgate ${spec.name} — ${spec.summary}`, '', 'usage:'];
  for (const u of spec.usage) lines.push(`  toolgate ${u}`);
  lines.push('', ...wrap(spec.description, 78), '');
  const flags = Object.entries(spec.flags);
  if (flags.length > 0) {
    lines.push('flags:');
    const left = flags.map(([name, f]) => `--${name}${f.type === 'string' ? ` ${f.value ?? 'VALUE'}` : ''}`);
    const width = Math.max(...left.map((l) => l.length), '-h, --help'.length) + 2;
    flags.forEach(([, f], i) => {
      const def = f.default === undefined ? '' : ` (default: ${f.default})`;
      lines.push(`  ${left[i]!.padEnd(width)}${f.description}${def}`);
    });
    lines.push(`  ${'-h, --help'.padEnd(width)}print this help`, '');
  }
  if (spec.env.length > 0) {
    lines.push('environment:');
    const width = Math.max(...spec.env.map((e) => e.length)) + 2;
    for (const e of spec.env) lines.push(`  ${e.padEnd(width)}${ENVIRONMENT[e]}`);
    lines.push('');
  }
  if (spec.examples.length > 0) {
    lines.push(spec.examples.length === 1 ? 'example:' : 'examples:');
    for (const ex of spec.examples) lines.push(`  ${ex}`);
    lines.push('');
  }
  return `${lines.join('\n').replace(/\n+$/, '')}\n`;
}

/** `toolgate --help`: one line per command, then the environment. */
export function renderIndex(header: string, commands: readonly CommandSpec[]): string {
  const width = Math.max(...commands.map((c) => c.name.length)) + 3;
  const envWidth = Math.max(...Object.keys(ENVIRONMENT).map((e) => e.length)) + 2;
  return [
    header,
    '',
    'usage: toolgate <command> [flags]   (toolgate <command> --help for its flags, environment and an example)',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    'environment (a flag of the same meaning wins):',
    ...Object.entries(ENVIRONMENT).map(([name, text]) => `  ${name.padEnd(envWidth)}${text}`),
    '',
    '  --version   print the version',
    '',
  ].join('\n');
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      if (line && line.length + 1 + word.length > width) {
        out.push(line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    out.push(line);
  }
  return out;
}
