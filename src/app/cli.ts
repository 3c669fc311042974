/**
 * `toolgate` command line: parses flags and hands over. Nothing else lives here.
 *
 * Each command imports what it runs when it runs (`await import(…)`): the
 * daemon is ~1 MB of bundled code, and `--version`, `--help`, a mistyped flag
 * or `dev-token` need none of it. What is imported here at the top stays small
 * (no zod, no store, no SDK); test/e2e/daemon-bundle.test.ts checks what
 * `toolgate --version` loads.
 */
import { ConfigError } from '../config/config-error.js';
import { DatabaseOpenError } from '../store/database-open-error.js';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_ROOT } from '../runtime/package-root.js';
import { importFile } from '../runtime/import-file.js';
import { FolderError, ensureFolder, resolveDbPath } from '../config/data-dir.js';
import { isPostgresUrl } from '../store/pg/url.js';
import type { ServeOptions } from './serve.js';
import { VERSION } from './version.js';
import { MAX_TIMER_MS } from '../protocol/limits.js';
import { UsageError, parseCommand, printable, renderHelp, renderIndex } from './cli-help.js';
import { localSecrets } from '../auth/local-secrets.js';
import { maskSecrets } from '../codec/secret-scan.js';
import { ALL_SPECS, AUTOMATION, AUTOMATION_ADD, COMMANDS, CONFORMANCE, DEMO, DEV_CREDENTIAL, DEV_TOKEN, SERVE } from './cli-commands.js';

const INDEX = renderIndex(`toolgate ${VERSION} — one restricted tool, project_cli, for an LLM agent host`, COMMANDS);

/** Where a command writes and what environment it reads: the process's own, or a test's (`main(argv, io)`). */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
}

const PROCESS_IO: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env };

/**
 * Runs one `toolgate` command line and returns its exit code. `io` is the
 * process's stdout, stderr and environment unless given: tests run help and
 * usage through here in process. (`serve` itself always serves the process's
 * own stdio or port; its log lines go to `io.stderr`, so a test sees every line
 * a start that fails on its flags or its config writes.)
 */
export async function main(argv: string[] = process.argv.slice(2), io: CliIo = PROCESS_IO): Promise<number> {
  const [command, ...rest] = argv;
  const secrets = secretsOf(io.env);
  try {
    switch (command) {
      case 'serve':
        return await serveCommand(rest, io);
      case 'dev-token':
        return await devTokenCommand(rest, io);
      case 'dev-credential':
        return await devCredentialCommand(rest, io);
      case 'automation':
        return await automationCommand(rest, io);
      case 'conformance': {
        // Its --secret, --token and --token-b are secrets whatever their shape, from the first error on, parse
        // errors included (read off argv before parsing).
        const given = secretFlagValues(rest, ['--secret', '--token', '--token-b']);
        const withGiven = () => [...secrets(), ...given];
        const values = parseCommand(CONFORMANCE, rest, io.stdout, withGiven);
        if (values === null) return 0;
        const { ConformanceUsageError, conformanceCommand } = await import('../conformance/conformance-command.js');
        // The runner speaks only the protocol: tokens and configured secrets (the flags' among them) in what it
        // repeats — the command, its arguments, the program's last stderr line — are masked here (contract section 5).
        // Lowercased too: a host name comes back lowercased from URL parsing.
        // The parsed values too: a value the parser took in another form than argv's (`--token -5…`).
        const parsed = [values.secret, values.token, values['token-b']].filter((v): v is string => Boolean(v));
        const hidden = [...new Set([...withGiven(), ...parsed].flatMap((v) => [v, v.toLowerCase()]))];
        try {
          return await conformanceCommand(values, (t) => io.stdout.write(maskSecrets(t, hidden)));
        } catch (err) {
          if (err instanceof ConformanceUsageError) throw new UsageError(maskSecrets(err.message, hidden), 'conformance');
          // Any other failure reaches the launcher's crash line, which knows only the configured secrets: the
          // flags' values are masked out of its text and stack here.
          const masked = new Error(maskSecrets(String((err as Error | undefined)?.message ?? err), hidden));
          masked.stack = maskSecrets(String((err as Error | undefined)?.stack ?? masked.message), hidden);
          throw masked;
        }
      }
      case 'demo': {
        if (parseCommand(DEMO, rest, io.stdout, secrets) === null) return 0;
        // The demo host is an example built on toolgate/client (examples/demo-host), not part of the runtime.
        // Found from the package root, not from this file: the daemon may run from its bundle (dist/daemon).
        const demo = pathToFileURL(join(PACKAGE_ROOT, 'dist', 'examples', 'demo-host', 'demo.js')).href;
        const { runDemo } = (await importFile(demo)) as { runDemo(args: string[], opts: { maskPath(text: string): string }): Promise<number> };
        // The paths it prints are masked like every echo (contract section 5); the secrets are read when it prints
        // them, after its dev-token has made the data folder's dev secret.
        return await runDemo(rest, { maskPath: (text) => maskSecrets(text, localSecrets(io.env)) });
      }
      case '--version':
        io.stdout.write(`${VERSION}\n`);
        return 0;
      case 'help': {
        // `toolgate help automation add` = `toolgate automation add --help`.
        const spec = ALL_SPECS.find((c) => c.name === rest.join(' '));
        if (rest.length > 0 && !spec) throw new UsageError(`no help for ${JSON.stringify(printable(rest.join(' '), secrets()))}`);
        io.stdout.write(spec ? renderHelp(spec) : INDEX);
        return 0;
      }
      case '--help':
      case '-h':
        io.stdout.write(INDEX);
        return 0;
      case undefined:
        io.stderr.write(INDEX);
        return 2;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(printable(command, secrets()))}`);
    }
  } catch (err) {
    const line = usageLine(err, command, secrets);
    if (line === null) throw err;
    // A configuration error names the value or key it refuses (a pattern, a skill, a profile): a token or a
    // configured secret there is masked like everywhere else (contract section 5), and so in any usage line.
    io.stderr.write(`${maskSecrets(line, secrets())}\n`);
    return 2;
  }
}

/**
 * The one line a usage or configuration mistake prints (exit 2), or null for
 * a real failure. Never a stack: the person can act on the sentence.
 */
function usageLine(err: unknown, command: string | undefined, secrets: () => readonly string[]): string | null {
  if (err instanceof UsageError) {
    const where = err.command ? `toolgate ${err.command}` : 'toolgate';
    return `${where}: ${err.message} (see ${where} --help)`;
  }
  if (err instanceof ConfigError || err instanceof DatabaseOpenError || err instanceof FolderError) return `toolgate: ${oneLine((err as Error).message)}`;
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number; hostname?: string };
  if (command === 'serve' && (e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN' || e?.code === 'EAI_FAIL')) {
    return `toolgate serve: cannot listen on --host ${JSON.stringify(printable(e.hostname ?? '?', secrets()))}: no such host name (${e.code}); use an address of this machine such as 127.0.0.1`;
  }
  // The listen's own failures only (another EACCES or EINVAL is not the address's). EINVAL: an address the system
  // will not listen on at all, such as an IPv6 scope (`fe80::1%x`) naming no interface; EAFNOSUPPORT: an IPv6
  // address on a machine without IPv6.
  const listenCodes = ['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL', 'EINVAL', 'EAFNOSUPPORT'] as const;
  if (command === 'serve' && e?.syscall === 'listen' && listenCodes.includes(e.code as (typeof listenCodes)[number])) {
    const what = {
      EADDRINUSE: 'is already in use',
      EACCES: 'is not permitted',
      EADDRNOTAVAIL: 'is not an address of this machine',
      EINVAL: 'is not one this machine can listen on (an IPv6 scope after % must name one of its interfaces)',
      EAFNOSUPPORT: 'is of an address family this machine does not support',
    }[e.code as (typeof listenCodes)[number]];
    // Node leaves the port out of the error when --port 0 was asked for: there is none to name.
    const where = e.port === undefined ? (e.address ?? '?') : `${e.address ?? '?'}:${e.port}`;
    return `toolgate serve: cannot listen on ${where}: the address ${what} (${e.code}); choose another --port (0 picks a free one) or --host`;
  }
  return null;
}

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ');

/**
 * The values given to any of `flags` (`--flag V` or `--flag=V`) in `args`, before any parsing. The argument
 * after such a flag is taken whatever it looks like: a secret may begin with `-`, and masking a flag name
 * that was no value costs a message its clarity, never a secret.
 */
function secretFlagValues(args: readonly string[], flags: readonly string[]): string[] {
  const out: string[] = [];
  args.forEach((a, i) => {
    const eq = a.indexOf('=');
    if (flags.includes(a) && i + 1 < args.length) out.push(args[i + 1]!);
    else if (eq > 0 && flags.includes(a.slice(0, eq))) out.push(a.slice(eq + 1));
  });
  return out.filter((v) => v.length > 0);
}

/**
 * The configured secrets an echo of what the user typed must not show: the environment's and the data
 * folder's (auth/local-secrets.ts), read once and only when a mistake is reported.
 */
function secretsOf(env: NodeJS.ProcessEnv): () => readonly string[] {
  let known: readonly string[] | undefined;
  return () => (known ??= localSecrets(env));
}

async function serveCommand(args: string[], io: CliIo): Promise<number> {
  const opts = serveOptionsOf(args, io.env, io.stdout);
  if (opts === null) return 0;
  const { serve } = await import('./daemon-commands.js');
  // The process's own stderr keeps serve's batched writer; another io (a test's) gets each line as it is logged.
  return serve(opts, io === PROCESS_IO ? undefined : (line) => void io.stderr.write(line));
}

/**
 * `serve`'s flags as the options `serve` (and `createDaemon`) take, or null
 * when they asked for help (printed). Tests that run the daemon in process
 * (test/helpers/in-process.ts) pass their flags through here too.
 */
export function serveOptionsOf(args: string[], env: NodeJS.ProcessEnv, out: CliIo['stdout'] = process.stdout): ServeOptions | null {
  const values = parseCommand(SERVE, args, out, secretsOf(env));
  if (values === null) return null;
  const transports = [values.stdio, values.ws, values.mcp].filter(Boolean).length;
  if (transports !== 1) throw new UsageError('needs exactly one transport: --stdio, --ws or --mcp', 'serve');
  if (!values.ws && (values.port !== undefined || values.host !== undefined)) throw new UsageError('--port and --host belong to --ws', 'serve');
  if (values.ws && values.port === undefined) throw new UsageError('--ws needs --port N (0 picks a free port)', 'serve');
  const executor = values.executor ?? 'subprocess';
  if (executor !== 'subprocess' && executor !== 'inprocess') throw new UsageError('--executor must be subprocess or inprocess', 'serve');
  const port = values.port === undefined ? undefined : integer('--port', values.port, 0, 65535);
  return {
    transport: values.ws ? 'ws' : values.mcp ? 'mcp' : 'stdio',
    host: values.host,
    port,
    db: values.db,
    config: values.config,
    dev: values.dev ?? false,
    executor,
    limits: {
      callTimeoutMs: optionalMillis('--call-timeout-ms', values['call-timeout-ms']),
      maxMessageBytes: optionalInteger('--max-message-bytes', values['max-message-bytes']),
      maxInFlight: optionalInteger('--max-in-flight', values['max-in-flight']),
      pingIntervalMs: optionalMillis('--ping-interval-ms', values['ping-interval-ms']),
      shutdownGraceMs: optionalMillis('--shutdown-grace-ms', values['shutdown-grace-ms']),
    },
    env,
  };
}

function integer(flag: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${flag} must be an integer from ${min} to ${max}`, 'serve');
  return n;
}

function optionalInteger(flag: string, raw: string | undefined): number | undefined {
  return raw === undefined ? undefined : integer(flag, raw, 1, Number.MAX_SAFE_INTEGER);
}

/** A delay for a Node timer: above MAX_TIMER_MS Node would clamp it to 1 ms. */
function optionalMillis(flag: string, raw: string | undefined): number | undefined {
  return raw === undefined ? undefined : integer(flag, raw, 1, MAX_TIMER_MS);
}

async function devTokenCommand(args: string[], io: CliIo): Promise<number> {
  const values = parseCommand(DEV_TOKEN, args, io.stdout, secretsOf(io.env));
  if (values === null) return 0;
  if (!values.user) throw new UsageError('needs --user ID', 'dev-token');
  const ttl = values.ttl === undefined ? 24 * 3600 : Number(values.ttl);
  if (!(Number.isInteger(ttl) && ttl > 0)) throw new UsageError('--ttl must be a positive whole number of seconds', 'dev-token');
  const { devToken } = await import('../auth/dev-token.js');
  const token = await devToken({ user: values.user, phone: values.phone, name: values.name, role: values.role, ttlSeconds: ttl, env: io.env });
  io.stdout.write(`${token}\n`);
  return 0;
}

async function devCredentialCommand(args: string[], io: CliIo): Promise<number> {
  const values = parseCommand(DEV_CREDENTIAL, args, io.stdout, secretsOf(io.env));
  if (values === null) return 0;
  if (!values.user) throw new UsageError('needs --user ID', 'dev-credential');
  if (!values.action) throw new UsageError('needs --action MODULE.METHOD', 'dev-credential');
  const db = resolveDbPath(values.db, io.env);
  if (!isPostgresUrl(db)) ensureFolder(dirname(db), '--db');
  const { devCredential } = await import('./daemon-commands.js');
  io.stdout.write(`${await devCredential({ user: values.user, action: values.action, db, env: io.env })}\n`);
  return 0;
}

async function automationCommand(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'add' && (args.includes('--help') || args.includes('-h'))) {
    io.stdout.write(renderHelp(AUTOMATION));
    return 0;
  }
  if (sub !== 'add') throw new UsageError(sub === undefined ? 'needs a subcommand: add' : `unknown subcommand ${JSON.stringify(printable(sub, localSecrets(io.env)))}`, 'automation');
  const values = parseCommand(AUTOMATION_ADD, rest, io.stdout, secretsOf(io.env));
  if (values === null) return 0;
  if (!values.owner) throw new UsageError('needs --owner USER_ID', 'automation add');
  if (values.allow === undefined) throw new UsageError('needs --allow m.x,m.y', 'automation add');
  const db = resolveDbPath(values.db, io.env);
  if (!isPostgresUrl(db)) ensureFolder(dirname(db), '--db'); // a file in the way is one line, not EEXIST
  const list = (v: string | undefined) => (v ?? '').split(',').map((x) => x.trim()).filter(Boolean);
  const ttl = values['ask-ttl-s'];
  const { addAutomationJob } = await import('./daemon-commands.js');
  const job = await addAutomationJob({
    owner: values.owner,
    skills: list(values.skills),
    allow: list(values.allow),
    ...(values.quota === undefined ? {} : { quota: values.quota }),
    ask: list(values.ask),
    ...(ttl === undefined ? {} : { askTtlS: ttl }),
    db: values.db,
    env: io.env,
  });
  io.stdout.write(`${JSON.stringify(job)}\n`);
  return 0;
}
