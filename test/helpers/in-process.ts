/**
 * The daemon in this process, the way vscode-jsonrpc's own tests run a
 * server: `createDaemon` (the same runtime `toolgate serve` builds), served
 * by the real stdio transport over an in-memory duplex pair, or by the real
 * WebSocket transport on a loopback port of this process. The test's client
 * is the package's typed client (`toolgate/client`), wrapped exactly as
 * test/helpers/host.ts wraps it, so every result and `tool/result` is
 * validated against schemas/ too.
 *
 * What this skips is the process boundary: `main`, the binary's stdio
 * pipes and signals, its exit code, the lines only `serve()` writes
 * (`listening`, `serving`, `stopped`). The suites that spawn the daemon in
 * test/e2e keep that path (at least one per transport and executor); a
 * suite about the protocol's behaviour (dispatcher, tool/invoke, history,
 * subscriptions, sessions, MCP over HTTP, AG-UI) runs here, without a
 * daemon process per case. `--ws` serves on the binary's own listener
 * (src/app/ws-listener.ts), every HTTP route included.
 *
 * The executor defaults to `inprocess` (no project-cli process per call);
 * `executor: 'subprocess'` starts project-cli per call as `serve` does.
 */
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { ToolgateClient } from '../../src/client/index.js';
import { createDaemon, limitsOf } from '../../src/app/serve.js';
import { serveOptionsOf } from '../../src/app/cli.js';
import { listenWs } from '../../src/app/ws-listener.js';
import type { Services } from '../../src/rpc/services.js';
import { createLogger } from '../../src/runtime/logger.js';
import { serveStdio } from '../../src/rpc/stdio-transport.js';
import { serveContext, type ServeContext } from '../../src/rpc/serve-context.js';
import { Client as McpClient } from '@modelcontextprotocol/client';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { openMcpStdioPrincipal } from '../../src/mcp/mcp-session.js';
import { serveMcpStdio } from '../../src/mcp/mcp-stdio.js';
import { connectWs, makeClient, type Client, type Transport } from './host.js';
import { tempDir } from './repo.js';
import { TEST_BEARER_SECRET } from './tokens.js';
import { pgDatabaseFor, TEST_PG_URL } from './pg.js';

export interface InProcessHost extends Client {
  transport: Transport;
  /** The runtime itself: its store, sessions, subscriptions and executor, for a test to look at or to hold. */
  services: Services;
  ctx: ServeContext<Services>;
  dbPath: string;
  dataDir: string;
  /** ws only: the loopback port of this process's HTTP server. */
  port?: number;
  /** The daemon's log lines (JSON, one a line), as `serve` would write them to stderr. */
  stderr(): string;
  /** Another WebSocket connection to the same daemon (ws only). */
  connect(): Promise<Client>;
  /**
   * Another connection over the real stdio transport (either `transport`), on a fresh in-memory pair:
   * `toDaemon` is the daemon's stdin, `fromDaemon` its stdout, which ends once the connection does
   * (`exit`, or the end of `toDaemon`), as a process's stdout would.
   */
  openStdio(): { toDaemon: PassThrough; fromDaemon: PassThrough; finished: Promise<number> };
  /** Closes the connection(s) and the transport, then the store. Resolves with 0 like a clean exit. */
  stop(): Promise<number>;
}

export interface InProcessOptions {
  transport?: Transport;
  /** `serve`'s flags, parsed as the binary parses them (`--config`, `--max-in-flight`, `--executor`…). */
  args?: string[];
  /** The executor when `args` names none: `inprocess` here (the binary's default is `subprocess`). */
  executor?: 'inprocess' | 'subprocess';
  /** The daemon's environment (bearer secret and TOOLGATE_HOME are set unless given). */
  env?: Record<string, string>;
  dataDir?: string;
  /** The database (path or URL) when it is not the data folder's own. */
  db?: string;
}

/** Starts the daemon in this process and connects one client to it. */
/** `--executor` of `opts.executor` (default inprocess), unless `opts.args` names one: a flag is given once. */
function executorArgs(opts: Pick<InProcessOptions, 'executor' | 'args'>): string[] {
  const named = opts.args?.some((a) => a === '--executor' || a.startsWith('--executor='));
  return named ? [] : ['--executor', opts.executor ?? 'inprocess'];
}

export async function startInProcess(opts: InProcessOptions = {}): Promise<InProcessHost> {
  const transport = opts.transport ?? 'stdio';
  const dataDir = opts.dataDir ?? tempDir();
  // The PostgreSQL pass: the daemons of one data folder share one fresh database (as host.ts).
  const dbPath = opts.db ?? (TEST_PG_URL ? await pgDatabaseFor(dataDir) : join(dataDir, 'toolgate.db'));
  const env: Record<string, string> = { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_HOME: dataDir, ...opts.env };
  let logs = '';
  const log = createLogger((line) => (logs += line.endsWith('\n') ? line : `${line}\n`), (env.TOOLGATE_LOG_LEVEL as 'info' | undefined) ?? 'info');
  // The binary's own flag parsing (src/app/cli.ts), so a suite passes the flags it would pass to `toolgate serve`.
  const argv = [transport === 'ws' ? '--ws' : '--stdio', ...(transport === 'ws' ? ['--port', '0'] : []), '--db', dbPath, ...executorArgs(opts), ...(opts.args ?? [])];
  const serveOpts = serveOptionsOf(argv, env);
  if (!serveOpts) throw new Error('startInProcess: --help is not a daemon');
  const services = await createDaemon(serveOpts, log);
  log.maskSecrets(services.secrets ?? []);
  let accepting = true;
  const limits = limitsOf(serveOpts, services.config);
  const ctx = serveContext(services, { limits, accepting: () => accepting });

  const extra: Client[] = [];
  const stdioPairs: Array<{ toDaemon: PassThrough; close(): void }> = [];
  let client: Client;
  let port: number | undefined;
  let closeTransport: () => Promise<void>;
  if (transport === 'stdio') {
    const toDaemon = new PassThrough();
    const fromDaemon = new PassThrough();
    const served = serveStdio(ctx, toDaemon, fromDaemon);
    // `exit` (or the end of input) ends the served connection; the client then sees its stream close.
    void served.finished.then(() => fromDaemon.end());
    const tg = ToolgateClient.fromStreams(fromDaemon, toDaemon);
    client = makeClient(tg, async () => tg.connection.dispose());
    closeTransport = async () => {
      toDaemon.end();
      served.close();
    };
  } else {
    // The binary's own listener (src/app/ws-listener.ts): every route `serve --ws` has, MCP over HTTP included.
    const listener = await listenWs(ctx, { host: serveOpts.host, port: 0 }, log);
    port = listener.port;
    client = await connectWs(port);
    closeTransport = () => listener.close();
  }

  let stopped: Promise<number> | undefined;
  return {
    ...client,
    transport,
    services,
    ctx,
    dbPath,
    dataDir,
    ...(port === undefined ? {} : { port }),
    stderr: () => logs,
    async connect() {
      if (port === undefined) throw new Error('connect() needs the ws transport');
      const c = await connectWs(port);
      extra.push(c);
      return c;
    },
    openStdio() {
      const toDaemon = new PassThrough();
      const fromDaemon = new PassThrough();
      const served = serveStdio(ctx, toDaemon, fromDaemon);
      void served.finished.then(() => fromDaemon.end());
      stdioPairs.push({ toDaemon, close: () => served.close() });
      return { toDaemon, fromDaemon, finished: served.finished };
    },
    stop() {
      stopped ??= (async () => {
        accepting = false;
        for (const c of extra) await c.close().catch(() => {});
        for (const p of stdioPairs) {
          p.toDaemon.end();
          p.close();
        }
        await client.close().catch(() => {});
        await closeTransport();
        await ctx.writes.drained();
        await services.store.close();
        return 0;
      })();
      return stopped;
    },
  };
}

export interface InProcessMcp {
  /** The MCP SDK's client, connected to `serve --mcp`'s own server over an in-memory pipe pair. */
  client: McpClient;
  services: Services;
  dbPath: string;
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * `serve --mcp` in this process: the daemon built from the binary's own flag
 * parsing (`--config`, `--executor`…), its stdio MCP server
 * (src/mcp/mcp-stdio.ts) over two in-memory pipes, acting for the user of
 * `token` (TOOLGATE_MCP_TOKEN), and the SDK's client on the other end.
 */
export async function startMcpInProcess(token: string, opts: Omit<InProcessOptions, 'transport'> = {}): Promise<InProcessMcp> {
  const dataDir = opts.dataDir ?? tempDir();
  const dbPath = opts.db ?? (TEST_PG_URL ? await pgDatabaseFor(dataDir) : join(dataDir, 'toolgate.db'));
  const env: Record<string, string> = { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_HOME: dataDir, TOOLGATE_MCP_TOKEN: token, ...opts.env };
  let logs = '';
  const log = createLogger((line) => (logs += line.endsWith('\n') ? line : `${line}\n`), 'info');
  const serveOpts = serveOptionsOf(['--mcp', '--db', dbPath, ...executorArgs(opts), ...(opts.args ?? [])], env);
  if (!serveOpts) throw new Error('startMcpInProcess: --help is not a daemon');
  const services = await createDaemon(serveOpts, log);
  log.maskSecrets(services.secrets ?? []);
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const principal = await openMcpStdioPrincipal(services, env);
  const handle = await serveMcpStdio(serveContext(services, { limits: limitsOf(serveOpts, services.config) }), { principal, stdin: toServer, stdout: fromServer });
  // The server's newline-delimited JSON transport is symmetric: the client uses it the other way round.
  const client = new McpClient({ name: 'in-process', version: '1' });
  await client.connect(new StdioServerTransport(fromServer, toServer));
  return {
    client,
    services,
    dbPath,
    stderr: () => logs,
    async stop() {
      await client.close();
      await handle.close();
      await services.store.close();
    },
  };
}

/**
 * The executor on each transport, for a suite that runs the same cases over both: one each. The
 * two executors answer byte for byte alike (test/e2e/executors.test.ts,
 * unit/daemon/model-facing-errors.test.ts), so the suite covers both without sending every case
 * through a project-cli process twice.
 */
export const EXECUTOR_FOR: Readonly<Record<Transport, 'subprocess' | 'inprocess'>> = { stdio: 'subprocess', ws: 'inprocess' };
