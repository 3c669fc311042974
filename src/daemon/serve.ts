import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../store/database.js';
import { closeCliDatabases } from '../cli-router/run-cli.js';
import { serveStdio } from '../rpc/stdio-transport.js';
import { ConfigError, resolveBearerKeys } from './bearer-auth.js';
import { loadConfig } from './config.js';
import { loadSigningKey } from './credential-issuer.js';
import { dataDirOf, resolveDbPath } from './data-dir.js';
import type { Daemon } from './daemon.js';
import { inprocessExecutor, subprocessExecutor } from './executor.js';
import { createLogger, type Logger } from './logger.js';
import { PACKAGE_ROOT } from './package-root.js';
import { recoverToolCalls } from './recovery.js';
import { SessionRegistry } from './sessions.js';
import { discoverSkills } from './skills.js';

export interface ServeOptions {
  transport: 'stdio';
  db?: string | undefined;
  config?: string | undefined;
  dev: boolean;
  executor: 'subprocess' | 'inprocess';
  callTimeoutMs?: number | undefined;
  env: NodeJS.ProcessEnv;
}

export const VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Builds the runtime: every configuration problem is a ConfigError raised before anything is served. */
export async function createDaemon(opts: ServeOptions, log: Logger): Promise<Daemon> {
  const dbPath = resolveDbPath(opts.db, opts.env);
  const dataDir = dataDirOf(dbPath);
  const bearerKeys = resolveBearerKeys(opts.env, dataDir, opts.dev);
  if (!bearerKeys) {
    throw new ConfigError(
      'no bearer secret configured: set TOOLGATE_BEARER_SECRET (HS256) or TOOLGATE_BEARER_JWKS (a JWKS file), ' +
        'or pass --dev to create a local development secret in the data folder',
    );
  }
  const config = loadConfig(opts.config, discoverSkills());
  const db = openDatabase(dbPath);
  try {
    const signingKey = await loadSigningKey(opts.env, dataDir);
    const recovered = recoverToolCalls(db, log);
    if (recovered > 0) log.log('warn', 'recovered tool calls', { count: recovered });
    return {
      db,
      dbPath,
      config,
      signingKey,
      bearerKeys,
      executor: opts.executor === 'inprocess' ? inprocessExecutor() : subprocessExecutor(),
      log,
      env: opts.env,
      sessions: new SessionRegistry(),
      callTimeoutMs: opts.callTimeoutMs ?? 30_000,
      version: VERSION,
    };
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * Runs the daemon until the host says `exit`, stdin ends, or a signal
 * arrives; then stops taking calls, lets in-flight ones finish (bounded),
 * closes the database and returns the exit code.
 */
export async function serve(opts: ServeOptions): Promise<number> {
  const log = createLogger();
  const daemon = await createDaemon(opts, log);
  const inflight = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>): Promise<T> => {
    inflight.add(work);
    const done = () => inflight.delete(work);
    work.then(done, done);
    return work;
  };
  log.log('info', 'serving', { transport: opts.transport, db: daemon.dbPath, executor: daemon.executor.kind, version: VERSION });

  const stdio = serveStdio(daemon, process.stdin, process.stdout, track);
  const signalled = new Promise<number>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      log.log('info', 'signal received', { signal });
      resolve(0);
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
  const code = await Promise.race([stdio.finished, signalled]);

  const deadline = new Promise((r) => setTimeout(r, daemon.callTimeoutMs + 1000).unref());
  await Promise.race([Promise.allSettled([...inflight]), deadline]);
  closeCliDatabases();
  daemon.db.close();
  log.log('info', 'stopped', { exit_code: code });
  return code;
}
