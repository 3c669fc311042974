/**
 * `toolgate conformance (--stdio "CMD …" | --ws ws://HOST:PORT/rpc) --token T [--token-b T2]`:
 * checks any implementation of the toolgate protocol from the outside. The
 * flags are parsed (and `--help` answered) by the toolgate command line from
 * its spec; this module judges them and runs. Exit 0 iff every check passed.
 */
import { lookup } from 'node:dns/promises';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { MAX_TIMER_MS } from '../protocol/limits.js';
import { splitCommand } from './command-line.js';
import { runConformance } from './runner.js';
import { stdioTransport, wsTransport } from './transport.js';

export interface ConformanceFlags {
  stdio?: string | undefined;
  ws?: string | undefined;
  token?: string | undefined;
  'token-b'?: string | undefined;
  secret?: string | undefined;
  agent?: string | undefined;
  'ask-agent'?: string | undefined;
  'timeout-ms'?: string | undefined;
}

/** A mistake in how the command was called (the caller prints it as one line, exit 2). */
export class ConformanceUsageError extends Error {
  override name = 'ConformanceUsageError';
}

export async function conformanceCommand(values: ConformanceFlags, write: (text: string) => void = (t) => process.stdout.write(t)): Promise<number> {
  const usage = (message: string): never => {
    throw new ConformanceUsageError(message);
  };
  if ((values.stdio === undefined) === (values.ws === undefined)) usage('give exactly one of --stdio "CMD" and --ws URL');
  if (!values.token) usage('needs --token T');
  const timeoutMs = values['timeout-ms'] === undefined ? 30_000 : Number(values['timeout-ms']);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMER_MS) usage(`--timeout-ms must be a whole number from 1 to ${MAX_TIMER_MS}`);
  let argv: string[] = [];
  if (values.stdio !== undefined) {
    try {
      argv = splitCommand(values.stdio);
    } catch (err) {
      usage(`--stdio: ${(err as Error).message}`);
    }
  }
  // A program that cannot start, or a host that does not resolve, is the caller's mistake (contract
  // section 1: one line, exit 2), not a report of every check failed.
  if (argv[0] !== undefined && !findsProgram(argv[0], process.env)) {
    usage(`--stdio: cannot find the program ${JSON.stringify(argv[0])} (give a path to an executable file, or a command on PATH)`);
  }
  const url = values.ws;
  if (url !== undefined && !/^wss?:\/\//.test(url)) usage('--ws needs a ws:// or wss:// URL');
  if (url !== undefined) {
    let host = '';
    try {
      host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
    } catch {
      usage('--ws needs a ws:// or wss:// URL');
    }
    const code = await lookup(host).then(
      () => null,
      (err: NodeJS.ErrnoException) => err.code ?? 'ENOTFOUND',
    );
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL') usage(`--ws: cannot resolve the host ${JSON.stringify(host)} (${code})`);
  }
  const report = await runConformance({
    open: url !== undefined ? () => wsTransport(url) : async () => stdioTransport(argv),
    multiConnection: url !== undefined,
    tokenA: values.token!,
    tokenB: values['token-b'],
    secret: values.secret,
    agent: values.agent,
    askAgent: values['ask-agent'],
    timeoutMs,
    write: (line) => write(`${line}\n`),
  });
  return report.failed === 0 ? 0 : 1;
}

/** Whether `spawn` (no shell) can start `program`: a path to an executable file, or a name found on PATH. */
function findsProgram(program: string, env: NodeJS.ProcessEnv): boolean {
  const runnable = (path: string) => {
    try {
      accessSync(path, constants.X_OK);
      return statSync(path).isFile();
    } catch {
      return false;
    }
  };
  if (program.includes('/')) return runnable(program);
  return (env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && runnable(join(dir, program)));
}
