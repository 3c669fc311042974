/**
 * `toolgate` command line: parses flags and hands over. Nothing else lives here.
 */
import { parseArgs } from 'node:util';
import { ConfigError } from './bearer-auth.js';
import { devToken } from './dev-token.js';
import { serve, VERSION } from './serve.js';

const USAGE = `toolgate ${VERSION}

usage:
  toolgate serve --stdio [--db FILE] [--config FILE] [--executor subprocess|inprocess] [--dev]
  toolgate dev-token --user ID [--phone P] [--name N] [--role R] [--ttl SECONDS] [--db FILE]
  toolgate demo [--db FILE]

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
    if (err instanceof UsageError || err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
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
      db: { type: 'string' },
      config: { type: 'string' },
      executor: { type: 'string' },
      dev: { type: 'boolean' },
      'call-timeout-ms': { type: 'string' },
    },
    strict: true,
  });
  if (values.ws) throw new UsageError('serve --ws is not available in this build yet; use --stdio');
  if (!values.stdio) throw new UsageError('serve needs a transport: --stdio');
  const executor = values.executor ?? 'subprocess';
  if (executor !== 'subprocess' && executor !== 'inprocess') throw new UsageError('--executor must be subprocess or inprocess');
  const timeout = values['call-timeout-ms'] === undefined ? undefined : Number(values['call-timeout-ms']);
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout > 0)) throw new UsageError('--call-timeout-ms must be a positive integer');
  return serve({ transport: 'stdio', db: values.db, config: values.config, dev: values.dev ?? false, executor, callTimeoutMs: timeout, env: process.env });
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
