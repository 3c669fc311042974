/**
 * `toolgate conformance (--stdio "CMD …" | --ws ws://HOST:PORT/rpc) --token T [--token-b T2]`:
 * checks any implementation of the toolgate protocol from the outside.
 * Exit 0 iff every check passed; 2 on bad usage.
 */
import { parseArgs } from 'node:util';
import { splitCommand } from './command-line.js';
import { runConformance } from './runner.js';
import { stdioTransport, wsTransport } from './transport.js';

export const CONFORMANCE_HELP = `toolgate conformance — check an implementation of the toolgate protocol from the outside

usage:
  toolgate conformance --stdio "CMD …" --token T [--token-b T2] [--timeout-ms N]
  toolgate conformance --ws ws://HOST:PORT/rpc --token T [--token-b T2] [--timeout-ms N]

Speaks only the public protocol (stdio with LSP framing, or WebSocket /rpc) and validates
every message it receives against the JSON Schemas in schemas/. It checks the lifecycle
(-32002 before initialize, shutdown/exit), sessions and bad tokens, tool/invoke with its
tool/result notifications before the response, the text projection against history's
context view, UI replay in the ui view, idempotency and DUPLICATE_TOOL_CALL_ID, batches
(one partial per item, then the final one), error shapes, message/append, thread/list,
skills, subscriptions (--ws) and thread isolation between two users (--token-b).
It prints one line per check and "N passed, M failed" last; exit 0 iff all pass.

flags:
  --stdio "CMD …"   start CMD (split into argv, never run by a shell) and talk on its stdin/stdout
  --ws URL          connect to a WebSocket endpoint, e.g. ws://127.0.0.1:8787/rpc
  --token T         bearer token of user A; its agent profile must allow calendar.* and memory.*
  --token-b T2      bearer token of a second user, for the thread-isolation check (skipped without)
  --timeout-ms N    how long to wait for any one response (default 30000)
  -h, --help        this text

Each run uses fresh thread and call ids, so it can be repeated against the same database.
The --stdio command inherits this process's environment (e.g. TOOLGATE_BEARER_SECRET).

example:
  T=$(node bin/toolgate.mjs dev-token --user alice); T2=$(node bin/toolgate.mjs dev-token --user bob)
  toolgate conformance --stdio "node bin/toolgate.mjs serve --stdio --db /tmp/c.db" --token "$T" --token-b "$T2"
`;

export async function conformanceCommand(args: string[], write: (text: string) => void = (t) => process.stdout.write(t)): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      stdio: { type: 'string' },
      ws: { type: 'string' },
      token: { type: 'string' },
      'token-b': { type: 'string' },
      'timeout-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    write(CONFORMANCE_HELP);
    return 0;
  }
  const usage = (message: string) => {
    process.stderr.write(`toolgate conformance: ${message}\n\n${CONFORMANCE_HELP}`);
    return 2;
  };
  if ((values.stdio === undefined) === (values.ws === undefined)) return usage('give exactly one of --stdio "CMD" and --ws URL');
  if (!values.token) return usage('--token T is required');
  const timeoutMs = values['timeout-ms'] === undefined ? 30_000 : Number(values['timeout-ms']);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) return usage('--timeout-ms must be a positive integer');
  let argv: string[] = [];
  if (values.stdio !== undefined) {
    try {
      argv = splitCommand(values.stdio);
    } catch (err) {
      return usage(`--stdio: ${(err as Error).message}`);
    }
  }
  const url = values.ws;
  if (url !== undefined && !/^wss?:\/\//.test(url)) return usage('--ws needs a ws:// or wss:// URL');
  const report = await runConformance({
    open: url !== undefined ? () => wsTransport(url) : async () => stdioTransport(argv),
    multiConnection: url !== undefined,
    tokenA: values.token,
    tokenB: values['token-b'],
    timeoutMs,
    write: (line) => write(`${line}\n`),
  });
  return report.failed === 0 ? 0 : 1;
}
