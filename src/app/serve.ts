import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { openStore } from '../store/open-store.js';
import { STORED_ROW_CHECK } from '../store/stored-rows.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { startCheckpointer } from '../store/sqlite/checkpointer.js';
import type { PgStore } from '../store/pg/pg-store.js';
import type { Store } from '../store/store.js';
import { serveStdio } from '../rpc/stdio-transport.js';
import { DEV_SECRET_FILE, resolveBearerKeys } from '../auth/bearer-auth.js';
import { localSecrets } from '../auth/local-secrets.js';
import { ConfigError } from '../config/config-error.js';
import { loadConfig } from '../config/config.js';
import { ProtectedResource } from '../auth/protected-resource.js';
import { loadSigningKey } from '../auth/credential-issuer.js';
import { describeDb, ensureFolder, keysDir, passwordInArgv, resolveDbPath } from '../config/data-dir.js';
import { isPostgresUrl } from '../store/pg/url.js';
import type { Services } from '../rpc/services.js';
import { subprocessExecutor } from '../calls/subprocess-executor.js';
import { InProcessExecutor } from '../calls/inprocess-executor.js';
import { ToolCalls } from '../calls/tool-calls.js';
import { createLogger, type Logger, type LogLevel } from '../runtime/logger.js';
import { recoverApprovedCalls, recoverToolCalls } from '../calls/recovery.js';
import { relayAsked } from '../calls/approval-relay.js';
import { DEFAULT_MAX_CONNECTIONS_PER_USER, DEFAULT_MAX_SESSIONS_PER_CONNECTION, SessionRegistry } from '../sessions/sessions.js';
import { DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION, SubscriptionRegistry } from '../threads/subscriptions.js';
import { httpGuard, loggedGuard } from '../rpc/http-guard.js';
import { DEFAULT_TRANSPORT_LIMITS, type ServeContext, type TransportLimits } from '../rpc/serve-context.js';
import { ThreadEventBus } from '../threads/thread-events.js';
import { storeEventSource } from '../threads/thread-event-source.js';
import type { DaemonConfig } from '../config/config.js';
import { PendingWrites } from '../rpc/tracked-writer.js';
import { openMcpStdioPrincipal } from '../mcp/mcp-session.js';
import { discoverSkills } from '../sessions/skills.js';
import { configuredSecrets } from '../auth/configured-secrets.js';
import { UiCache } from '../threads/ui-cache.js';
import { releaseYoungGeneration } from './start-up-heap.js';
import { startDaemonTracing, traceDaemon } from './observability.js';
import { exportErrorText } from '../telemetry/tracing.js';
import { watchLauncher } from './launcher-watch.js';
import { DEFAULT_MAX_RESULT_BYTES, MAX_TIMER_MS } from '../protocol/limits.js';
import { ApprovalWaiters } from '../calls/approval-waiters.js';
import { RunningCalls } from '../calls/running-calls.js';
import { ExpirySweeper, runLimitOf } from '../calls/expiry-sweeper.js';
import { CallStopped } from '../calls/call-stopped.js';
import type { LiveLimits } from '../sessions/profile-reload.js';
import { reloadConfig } from './config-reload.js';
import { VERSION } from './version.js';

export interface ServeOptions {
  transport: 'stdio' | 'ws' | 'mcp';
  host?: string | undefined;
  port?: number | undefined;
  db?: string | undefined;
  config?: string | undefined;
  dev: boolean;
  executor: 'subprocess' | 'inprocess';
  limits?: Partial<Limits>;
  env: NodeJS.ProcessEnv;
}

/** Configurable limits (flags win over the config file's `limits`): the transports' own, and the daemon's. */
export interface Limits extends TransportLimits {
  callTimeoutMs: number;
  /** Per action, overriding `callTimeoutMs` (`limits.action_timeout_ms`). */
  actionTimeoutMs: Readonly<Record<string, number>>;
  /** A stopped subprocess call: SIGTERM, then SIGKILL after this long. */
  cancelGraceMs: number;
  /**
   * How long shutdown waits for in-flight calls. By default the call timeout
   * plus a margin, so every call that was running finishes and is answered.
   */
  shutdownGraceMs: number;
  /** project-cli processes running at once, daemon-wide (subprocess executor); more calls queue. */
  maxProcesses: number;
  /** Sessions one connection may hold open (-32003 past it). */
  maxSessionsPerConnection: number;
  /** Connections holding `session/open` sessions of one user (-32003 past it). */
  maxConnectionsPerUser: number;
  /** Subscriptions one connection may hold (-32003 past it). */
  maxSubscriptionsPerConnection: number;
  /** Largest result projection (bytes); a larger one is the failure RESULT_TOO_LARGE. */
  maxResultBytes: number;
}

export const DEFAULT_LIMITS: Limits = {
  ...DEFAULT_TRANSPORT_LIMITS,
  callTimeoutMs: 30_000,
  actionTimeoutMs: {},
  cancelGraceMs: 2_000,
  shutdownGraceMs: 35_000,
  maxProcesses: Math.max(2, availableParallelism() * 4),
  maxSessionsPerConnection: DEFAULT_MAX_SESSIONS_PER_CONNECTION,
  maxConnectionsPerUser: DEFAULT_MAX_CONNECTIONS_PER_USER,
  maxSubscriptionsPerConnection: DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION,
  maxResultBytes: DEFAULT_MAX_RESULT_BYTES,
};

export { VERSION };

/** Builds the runtime: every configuration problem is a ConfigError raised before anything is served. */
export async function createDaemon(opts: ServeOptions, log: Logger): Promise<Services> {
  const dbPath = resolveDbPath(opts.db, opts.env);
  const dataDir = keysDir(opts.env);
  // serve --mcp acts for one token's user: without it, refuse before anything is created.
  if (opts.transport === 'mcp' && !opts.env.TOOLGATE_MCP_TOKEN) {
    throw new ConfigError('serve --mcp acts for the user of a bearer token: set TOOLGATE_MCP_TOKEN (toolgate dev-token --user ID mints one for --dev)');
  }
  const devSecretFile = join(dataDir, DEV_SECRET_FILE);
  if (opts.transport === 'mcp' && opts.dev && !opts.env.TOOLGATE_BEARER_SECRET && !opts.env.TOOLGATE_BEARER_JWKS && !existsSync(devSecretFile)) {
    // No token can verify against a secret that does not exist yet: creating one now would only hide that.
    throw new ConfigError(`TOOLGATE_MCP_TOKEN cannot verify: there is no dev secret in ${dataDir} yet; mint the token with toolgate dev-token --user ID (it creates the secret)`);
  }
  const config = loadConfig(opts.config, discoverSkills());
  const bearerKeys = resolveBearerKeys(opts.env, dataDir, opts.dev);
  // With auth.issuer, its access tokens are enough: no HS256 secret is needed (contract section 11).
  const oauth = config.auth.issuer ? protectedResource(config, opts.transport, log) : undefined;
  if (!bearerKeys && !oauth) {
    throw new ConfigError(
      'no bearer secret configured: set TOOLGATE_BEARER_SECRET (HS256) or TOOLGATE_BEARER_JWKS (a JWKS file), ' +
        'auth.issuer in the --config file (an OAuth / OpenID provider), or pass --dev to create a local development secret in the data folder',
    );
  }
  if (bearerKeys?.kind === 'secret' && bearerKeys.origin === 'env' && bearerKeys.secret.length < 32) {
    log.log('warn', 'TOOLGATE_BEARER_SECRET is shorter than 32 bytes: HS256 tokens signed with it can be brute-forced; generate one with openssl rand -base64 48 (docs/operations.md, Before production)');
  }
  if (bearerKeys?.kind === 'secret' && bearerKeys.origin === 'dev') warnStrayDevSecret(dbPath, dataDir, log);
  if (!isPostgresUrl(dbPath)) {
    const created = ensureFolder(dirname(dbPath), '--db');
    // A named folder that did not exist may be a typo: say where the database now is (the data folder is expected).
    if (created && created !== dataDir) log.log('info', 'created the folder for the database', { folder: created });
  }
  if (passwordInArgv(opts.db)) {
    log.log('warn', 'the database password is on the command line (--db), where every user of this machine can read it (ps): pass the URL in TOOLGATE_DB, or the password in PGPASSWORD', { db: describeDb(dbPath) });
  }
  // A migration checks every stored row against the protocol (stored-rows.ts); reads trust them after that.
  const store = await openStore(dbPath, {
    synchronous: config.store.synchronous,
    poolSize: config.store.poolSize,
    listenUrl: config.store.listenUrl,
    log,
    checkRows: STORED_ROW_CHECK,
  });
  // SQLite: WAL checkpoints on their own thread, off the calls' path (checkpointer.ts).
  if (store instanceof SqliteStore) {
    store.useCheckpointer(startCheckpointer(dbPath, config.store.synchronous, (err) => log.log('warn', 'WAL checkpoint failed', { err })));
  }
  try {
    const signingKey = await loadSigningKey(opts.env, dataDir);
    // The public half is what project-cli will trust for this database (contract sections 6, 7).
    await store.transaction((tx) => tx.credentialKeys.record(signingKey.kid, signingKey.publicJwk as Record<string, unknown>));
    const recovered = await recoverToolCalls(store, log);
    // Approved calls whose daemon died while they ran (contract section 17): done, not running for ever —
    // those older than their run could be; the expiry sweeper ends younger ones later (recovery.ts).
    const limits = limitsOf(opts, config);
    const orphans = await recoverApprovedCalls(store, log, runLimitOf({ timeoutMs: (action) => limits.actionTimeoutMs[action] ?? limits.callTimeoutMs, cancelGraceMs: limits.cancelGraceMs }));
    if (orphans > 0) log.log('warn', 'ended approved calls whose daemon died', { count: orphans });
    // PostgreSQL: running rows of calls whose daemon died (contract section 16) are not running.
    const reaped = await (store as Store).sharedCalls?.reap();
    if (reaped) log.log('warn', 'removed the running state of calls whose daemon died', { count: reaped });
    if (recovered > 0) log.log('warn', 'recovered tool calls', { count: recovered });
    const threadEvents = new ThreadEventBus(storeEventSource(store));
    const uiCache = new UiCache();
    const parts: Omit<Services, 'toolCalls'> = {
      store,
      dbPath,
      config,
      signingKey,
      bearerKeys,
      ...(oauth ? { oauth } : {}),
      executor: opts.executor === 'inprocess' ? new InProcessExecutor() : subprocessExecutor(limitsOf(opts, config).maxProcesses, opts.env, log),
      log,
      env: opts.env,
      sessions: new SessionRegistry(limitsOf(opts, config).maxSessionsPerConnection, limitsOf(opts, config).maxConnectionsPerUser),
      threadEvents,
      subscriptions: new SubscriptionRegistry(threadEvents, limitsOf(opts, config).maxSubscriptionsPerConnection, uiCache),
      uiCache,
      callTimeoutMs: limits.callTimeoutMs,
      timeoutMs: (action) => limits.actionTimeoutMs[action] ?? limits.callTimeoutMs,
      cancelGraceMs: limits.cancelGraceMs,
      calls: new RunningCalls(),
      maxResultBytes: limits.maxResultBytes,
      approvals: new ApprovalWaiters(),
      version: VERSION,
      secrets: configuredSecrets(opts.env, bearerKeys, signingKey),
    };
    // The call service reads the same object: a reload's new limits and the metrics attached later reach it.
    const services: Services = Object.assign(parts, { toolCalls: new ToolCalls(parts) });
    // A session ends at its token's exp, and its subscriptions with it (contract section 13).
    services.sessions.onExpire((s) => {
      services.subscriptions.dropSession(s.connectionId, s.id);
      log.log('info', 'session expired', { session_id: s.id, user_id: s.userId, connection: s.connectionId });
    });
    // PostgreSQL: other daemons' calls of watched threads reach this daemon's bus (LISTEN/NOTIFY).
    // (Loaded only then: a SQLite daemon never loads the PostgreSQL driver.)
    if (store.engine === 'postgres') {
      const { PgFanout } = await import('../threads/pg-fanout.js');
      services.fanout = await PgFanout.start(store as PgStore, threadEvents);
      // Another daemon's call/cancel of a call running here (contract section 16).
      services.fanout.onCallCancel((key) => services.calls.stop(key, CallStopped.cancelled()));
      // Another daemon's decision on a call awaiting approval (contract section 17): its waiters here look again.
      services.fanout.onCallSettled((key) => services.approvals.settled(key));
      const shared = store.sharedCalls;
      if (shared) services.announceCall = (key) => shared.announce(key);
      // A call asked on another daemon (contract section 17): this daemon's subscribers of its thread hear it.
      // This daemon's own asks come back too: its subscribers were told directly, so they are skipped.
      const origin = randomUUID();
      if (shared) services.announceAsked = (key) => shared.announceAsked(key, origin);
      services.fanout.onCallAsked((key, from) => {
        if (from !== origin) void relayAsked(services, key, log);
      });
    }
    return services;
  } catch (err) {
    await store.close();
    throw err;
  }
}

/**
 * `auth.issuer`'s protected resource. Without an HTTP port there is no
 * default public URL, so the audience must then be configured.
 */
function protectedResource(config: DaemonConfig, transport: ServeOptions['transport'], log: Logger): ProtectedResource {
  const { issuer, audience, jwksUrl, scopes } = config.auth;
  const resource = new ProtectedResource({ issuer: issuer!, audience, jwksUrl, scopes, publicUrl: config.http.publicUrl }, log);
  if (transport !== 'ws' && !resource.ready) {
    throw new ConfigError(`auth.audience: serve --${transport} has no HTTP port to name the resource by: set auth.audience (or http.public_url)`);
  }
  return resource;
}

/**
 * An older toolgate kept the dev secret beside the database; it now lives in
 * the data folder whatever --db says. A secret left beside the database is
 * not used (adopting a file from wherever --db points would let anyone who can
 * write there choose the secret): say so, so tokens minted with it are
 * understood to be refused.
 */
function warnStrayDevSecret(dbPath: string, dataDir: string, log: Logger): void {
  if (isPostgresUrl(dbPath) || dirname(dbPath) === dataDir) return;
  const stray = join(dirname(dbPath), DEV_SECRET_FILE);
  if (!existsSync(stray)) return;
  log.log('warn', 'a dev secret beside the database is not used: the dev secret lives in the data folder; mint tokens again with toolgate dev-token (or delete the old file)', {
    ignored: stray,
    used: join(dataDir, DEV_SECRET_FILE),
  });
}

export function limitsOf(opts: ServeOptions, config: DaemonConfig): Limits {
  const chosen = { ...config.limits, ...stripUndefined(opts.limits ?? {}) };
  const limits = { ...DEFAULT_LIMITS, ...chosen };
  if (chosen.shutdownGraceMs === undefined) limits.shutdownGraceMs = Math.min(limits.callTimeoutMs + 5_000, MAX_TIMER_MS);
  return limits;
}

export function liveLimits(l: Limits): LiveLimits {
  return { callTimeoutMs: l.callTimeoutMs, actionTimeoutMs: l.actionTimeoutMs, cancelGraceMs: l.cancelGraceMs };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Runs the daemon until the host says `exit`, stdin ends (stdio), or a
 * signal arrives; then stops taking calls, lets in-flight ones finish
 * (bounded by the grace period), closes the database and returns the exit code.
 * Its log lines go to `logTo` when given (`main(argv, io)`'s stderr), else to
 * the process's stderr in short batches.
 */
export async function serve(opts: ServeOptions, logTo?: (line: string) => void): Promise<number> {
  // SIGHUP's default action ends the process. One that arrives while the daemon starts (`systemctl reload`
  // right after `start`: the daemon may have read the file before its edit) is kept, and the file is read
  // again as soon as the daemon can reload it.
  const early: EarlyHangUp = { hungUp: false, listener: () => (early.hungUp = true) };
  process.on('SIGHUP', early.listener);
  try {
    return await serveFrom(opts, early, logTo);
  } finally {
    // Gone once serving began; a start that threw leaves it too.
    process.removeListener('SIGHUP', early.listener);
  }
}

/** The SIGHUP listener of the start: whether one came while the daemon was being built. */
interface EarlyHangUp {
  hungUp: boolean;
  readonly listener: () => void;
}

async function serveFrom(opts: ServeOptions, early: EarlyHangUp, logTo: ((line: string) => void) | undefined): Promise<number> {
  // The level of the environment serve was given (the process's own when the binary runs).
  const log = createLogger(logTo, (opts.env.TOOLGATE_LOG_LEVEL as LogLevel | undefined) ?? 'info');
  // The secrets known before the daemon is built (the environment's, the data folder's): masked from the first
  // line on, since the start logs before createDaemon knows them (a password in --db, the database's failure).
  const knownEarly = localSecrets(opts.env);
  log.maskSecrets(knownEarly);
  // An unresolvable --host is a mistake to report before anything is created (ENOTFOUND → one line, cli.ts).
  if (opts.transport === 'ws') await lookup(opts.host ?? '127.0.0.1');
  const tracing = await startDaemonTracing(opts.env, VERSION, log);
  let services: Services;
  try {
    services = await createDaemon(opts, log);
  } catch (err) {
    await tracing?.shutdown().catch(() => {});
    throw err;
  }
  let serving = false;
  let onSignal: (signal: NodeJS.Signals) => void = () => {};
  let onHangUp: () => void = () => {};
  let stopWatchingLauncher: () => void = () => {};
  const sweeper = new ExpirySweeper(services, log);
  /**
   * A start refused once the daemon is built (its port taken, its MCP token refused, its first sweep failing)
   * undoes what it made before the refusal is reported: the database closed, no signal listener left, the
   * background work stopped — a process that goes on (an embedding host, a supervisor retrying in process)
   * keeps nothing of it. Cleaning up never hides the refusal.
   */
  const undoStart = async (): Promise<void> => {
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGHUP', onHangUp);
    stopWatchingLauncher();
    await sweeper.stop().catch(() => {});
    await services.executor.drain?.().catch(() => {});
    await services.store.close().catch((e: unknown) => log.log('warn', 'closing the database after a refused start failed', { err: (e as Error).message }));
    await tracing?.shutdown().catch(() => {});
  };
  try {
    // A configured secret written verbatim into any later line (an error echoing a name, say) is masked too.
    log.maskSecrets([...new Set([...knownEarly, ...(services.secrets ?? [])])]);
    // Calls nobody decided within their ttl_s end APPROVAL_EXPIRED even when nobody looks (a dead asker's):
    // swept once before any transport listens, then every SWEEP_MS.
    await sweeper.sweep();
    if (tracing) await traceDaemon(services);
    const limits = limitsOf(opts, services.config);
    const inflight = new Set<Promise<unknown>>();
    let accepting = true;
    const track = <T>(work: Promise<T>): Promise<T> => {
      inflight.add(work);
      const done = () => inflight.delete(work);
      work.then(done, done);
      return work;
    };
    // The one context every transport of this serve shares (src/rpc/serve-context.ts).
    const ctx: ServeContext<Services> = {
      services,
      limits,
      accepting: () => accepting,
      track,
      writes: new PendingWrites(),
      // One Host/Origin guard for every HTTP route and every WebSocket upgrade (contract section 8).
      guard: loggedGuard(httpGuard(services.config.http), (msg, fields) => log.log('warn', msg, fields)),
    };

    const signalled = new Promise<number>((resolve) => {
      onSignal = (signal: NodeJS.Signals) => {
        log.log('info', 'signal received', { signal });
        resolve(0);
      };
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
      // Under npx / npm run, a SIGTERM to npm reaches npm only: its going is the daemon's signal.
      stopWatchingLauncher = watchLauncher(opts.env, ({ ppid, command }) => {
        log.log('info', 'the npm process that launched the daemon is gone: stopping as on SIGTERM', { launcher_pid: ppid, npm_command: command });
        resolve(0);
      });
    });
    // SIGHUP reloads --config (contract section 20) rather than ending the daemon.
    onHangUp = () => {
      reloadConfig({ services, log, file: opts.config, liveLimitsOf: (config) => liveLimits(limitsOf(opts, config)) });
    };
    process.on('SIGHUP', onHangUp);
    process.removeListener('SIGHUP', early.listener);
    if (early.hungUp) onHangUp();

    let stop: () => Promise<void>;
    let finished: Promise<number>;
    if (opts.transport === 'stdio') {
      const stdio = serveStdio(ctx, process.stdin, process.stdout);
      finished = stdio.finished;
      stop = async () => stdio.close();
    } else if (opts.transport === 'mcp') {
      const principal = await openMcpStdioPrincipal(services, opts.env);
      // Loaded only here: the MCP SDK costs ~27 MB of resident memory (see mcp-http-lazy.ts).
      const { serveMcpStdio } = await import('../mcp/mcp-stdio.js');
      const mcp = await serveMcpStdio(ctx, { principal });
      finished = mcp.closed.then(() => 0);
      stop = () => mcp.close();
    } else {
      // Loaded only here: the HTTP routes and the ws package are no part of a stdio or MCP daemon.
      const { listenWs } = await import('./ws-listener.js');
      const listener = await listenWs(ctx, { host: opts.host, port: opts.port }, log);
      // The one line a launcher waits for (contract section 1).
      process.stderr.write(`${JSON.stringify({ listening: { host: listener.host, port: listener.port } })}\n`);
      finished = new Promise<number>(() => {});
      stop = () => listener.close();
    }
    sweeper.start();
    log.log('info', 'serving', { transport: opts.transport, db: describeDb(services.dbPath), executor: services.executor.kind, version: VERSION });
    serving = true;
    // Start-up is over: the young generation may grow again (start-up-heap.ts).
    releaseYoungGeneration();

    const code = await Promise.race([finished, signalled]);
    accepting = false;
    const pending = inflight.size;
    const grace = new Promise((r) => setTimeout(r, limits.shutdownGraceMs).unref());
    await Promise.race([Promise.allSettled([...inflight]), grace]);
    // Past the grace, what still runs is cancelled: each call ends stored as CANCELLED (or with the outcome it
    // committed first), and its pending request is answered with that.
    if (services.calls.size > 0) {
      log.log('warn', 'shutdown grace over: cancelling running calls', { calls: services.calls.size });
      // Bounded: a stop that cannot take effect (a statement held by a lock) must not hold the exit. The cancel
      // grace is the live one (a SIGHUP may have changed it): the one the stopped children are killed by.
      const stopping = new Promise((r) => setTimeout(r, services.cancelGraceMs + 2_000).unref());
      await Promise.race([Promise.allSettled([services.calls.stopAll(CallStopped.shutdown()), ...inflight]), stopping]);
    }
    // A subprocess call is answered as its child closes its output: the child may still be exiting
    // (a stopped one within its kill grace).
    await Promise.race([services.executor.drain?.(), grace, new Promise((r) => setTimeout(r, services.cancelGraceMs + 1_000).unref())]);
    // Let the responses of settled calls leave before the transports close.
    await ctx.writes.drained();
    await stop();
    await sweeper.stop();
    await services.store.close();
    // Until here a SIGHUP reloads (harmless while stopping) rather than ending the process mid-close. The signal
    // listeners go too: a serve run inside another program (main(argv, io)) leaves none behind.
    process.removeListener('SIGHUP', onHangUp);
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('SIGINT', onSignal);
    stopWatchingLauncher();
    await tracing?.shutdown().catch((err: unknown) => log.log('warn', 'trace export at shutdown failed', { err: exportErrorText(err) }));
    log.log('info', 'stopped', { exit_code: code, drained_calls: pending });
    return code;
  } catch (err) {
    if (!serving) await undoStart();
    throw err;
  }
}
