/**
 * `toolgate` command line: parses flags and hands over. Nothing else lives here.
 */
import { parseArgs } from 'node:util';
import { ConfigError } from './bearer-auth.js';
import { DatabaseOpenError } from '../store/database.js';
import { devToken } from './dev-token.js';
import { addAutomationJob } from './automation.js';
import { serve, VERSION } from './serve.js';

const USAGE = `toolgate ${VERSION}

usage:
  toolgate serve --stdio [--db FILE] [--config FILE] [--executor subprocess|inprocess] [--dev]
  toolgate serve --ws --port N [--host 127.0.0.1] [--db FILE] [--config FILE] [--executor …] [--dev]
  toolgate serve --mcp [--db FILE] [--config FILE] [--executor …] [--dev]   (acts for the user of TOOLGATE_MCP_TOKEN)
        limits: [--call-timeout-ms N] [--max-message-bytes N] [--max-in-flight N] [--ping-interval-ms N] [--shutdown-grace-ms N]
  toolgate dev-token --user ID [--phone P] [--name N] [--role R] [--ttl SECONDS] [--db FILE]
  toolgate automation add --owner USER_ID --skills a,b --allow m.x,m.y [--db FILE]
  toolgate demo [--db FILE]
  toolgate conformance (--stdio "CMD …" | --ws ws://HOST:PORT/rpc) --token T [--token-b T2]   (see conformance --help)

environment: TOOLGATE_DB, TOOLGATE_BEARER_SECRET, TOOLGATE_BEARER_JWKS, TOOLGATE_SERVICE_KEY
`;

class UsageError extends Error {}

export async function main(argv: string[] = process.argv.slice(2)): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'serve':
        return await serveCommand(rest);
      case 'dev-token':
        return await devTokenCommand(rest);
      case 'automation':
        return automationCommand(rest);
      case 'conformance': {
        const { conformanceCommand } = await import('../conformance/cli.js');
        return await conformanceCommand(rest);
      }
      case 'demo': {
        const { runDemo } = await import('./demo.js');
        return await runDemo(rest);
      }
      case '--version':
        process.stdout.write(`${VERSION}\n`);
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError || err instanceof DatabaseOpenError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`toolgate: ${(err as Error).message}\n${err instanceof UsageError ? USAGE : ''}`);
      return 2;
    }
    throw err;
  }
}

async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      stdio: { type: 'boolean' },
      ws: { type: 'boolean' },
      mcp: { type: 'boolean' },
      host: { type: 'string' },
      port: { type: 'string' },
      db: { type: 'string' },
      config: { type: 'string' },
      executor: { type: 'string' },
      dev: { type: 'boolean' },
      'call-timeout-ms': { type: 'string' },
      'max-message-bytes': { type: 'string' },
      'max-in-flight': { type: 'string' },
      'ping-interval-ms': { type: 'string' },
      'shutdown-grace-ms': { type: 'string' },
    },
    strict: true,
  });
  const transports = [values.stdio, values.ws, values.mcp].filter(Boolean).length;
  if (transports !== 1) throw new UsageError('serve needs exactly one transport: --stdio, --ws or --mcp');
  if (!values.ws && (values.port !== undefined || values.host !== undefined)) throw new UsageError('--port and --host belong to --ws');
  if (values.ws && values.port === undefined) throw new UsageError('serve --ws needs --port N (0 picks a free port)');
  const executor = values.executor ?? 'subprocess';
  if (executor !== 'subprocess' && executor !== 'inprocess') throw new UsageError('--executor must be subprocess or inprocess');
  const port = values.port === undefined ? undefined : integer('--port', values.port, 0, 65535);
  return serve({
    transport: values.ws ? 'ws' : values.mcp ? 'mcp' : 'stdio',
    host: values.host,
    port,
    db: values.db,
    config: values.config,
    dev: values.dev ?? false,
    executor,
    limits: {
      callTimeoutMs: optionalInteger('--call-timeout-ms', values['call-timeout-ms']),
      maxMessageBytes: optionalInteger('--max-message-bytes', values['max-message-bytes']),
      maxInFlight: optionalInteger('--max-in-flight', values['max-in-flight']),
      pingIntervalMs: optionalInteger('--ping-interval-ms', values['ping-interval-ms']),
      shutdownGraceMs: optionalInteger('--shutdown-grace-ms', values['shutdown-grace-ms']),
    },
    env: process.env,
  });
}

function integer(flag: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${flag} must be an integer from ${min} to ${max}`);
  return n;
}

function optionalInteger(flag: string, raw: string | undefined): number | undefined {
  return raw === undefined ? undefined : integer(flag, raw, 1, Number.MAX_SAFE_INTEGER);
}

async function devTokenCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      user: { type: 'string' },
      phone: { type: 'string' },
      name: { type: 'string' },
      role: { type: 'string' },
      ttl: { type: 'string' },
      db: { type: 'string' },
    },
    strict: true,
  });
  if (!values.user) throw new UsageError('dev-token needs --user ID');
  const ttl = values.ttl === undefined ? 24 * 3600 : Number(values.ttl);
  if (!(Number.isInteger(ttl) && ttl > 0)) throw new UsageError('--ttl must be a positive number of seconds');
  const token = await devToken({ user: values.user, phone: values.phone, name: values.name, role: values.role, ttlSeconds: ttl, db: values.db, env: process.env });
  process.stdout.write(`${token}\n`);
  return 0;
}

function automationCommand(args: string[]): number {
  const [sub, ...rest] = args;
  if (sub !== 'add') throw new UsageError('usage: toolgate automation add --owner USER_ID --skills a,b --allow m.x,m.y [--db FILE]');
  const { values } = parseArgs({
    args: rest,
    options: { owner: { type: 'string' }, skills: { type: 'string' }, allow: { type: 'string' }, db: { type: 'string' } },
    strict: true,
  });
  if (!values.owner) throw new UsageError('automation add needs --owner USER_ID');
  if (values.allow === undefined) throw new UsageError('automation add needs --allow m.x,m.y');
  const list = (v: string | undefined) => (v ?? '').split(',').map((x) => x.trim()).filter(Boolean);
  const job = addAutomationJob({ owner: values.owner, skills: list(values.skills), allow: list(values.allow), db: values.db, env: process.env });
  process.stdout.write(`${JSON.stringify(job)}\n`);
  return 0;
}
