/**
 * Wires src/telemetry into a built daemon (contract section 15): the metrics
 * registry when `metrics.enabled` says so, and — only when tracing is on —
 * the child spans around the store's transactions and project-cli processes.
 */
import type { Services } from '../rpc/services.js';
import type { Logger } from '../runtime/logger.js';
import { ConfigError } from '../config/config-error.js';
import type { ToolgateMetrics } from '../telemetry/metrics.js';
import { otlpTracesEndpoint, startTracing, type Tracing } from '../telemetry/tracing.js';
import { storeAnswers } from '../telemetry/health.js';
import { opsRoutes } from '../http/ops-routes.js';
import { SubprocessExecutor } from '../calls/subprocess-executor.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** `metrics.enabled`, or by default: on for a loopback `--host`, off beyond. */
export function metricsEnabled(configured: boolean | undefined, host: string): boolean {
  return configured ?? LOOPBACK.has(host);
}

/** Starts tracing when `OTEL_TRACES_EXPORTER` asks for it (before the daemon is built, so its first call is traced). */
export function startDaemonTracing(env: NodeJS.ProcessEnv, version: string, log: Logger): Promise<Tracing | null> {
  const endpoint = otlpTracesEndpoint(env);
  const warn = (err: string) => log.log('warn', 'trace export failed: spans are dropped until the collector answers', { endpoint, err });
  return startTracing(env, version, warn).then(
    (tracing) => {
      if (tracing) {
        const where = tracing.exporters.map((e) => (e === 'otlp' ? endpoint : 'stderr (one JSON line per span)'));
        log.log('info', 'tracing on', { exporter: tracing.exporters.join(','), to: where.join(', ') });
      }
      return tracing;
    },
    // An exporter name it does not know is a configuration mistake: one line, exit 2.
    (err: unknown) => {
      throw new ConfigError((err as Error).message);
    },
  );
}

/** Child spans of each call's span: installed only when tracing is on, so a daemon without it keeps its own objects. */
export async function traceDaemon(services: Pick<Services, 'store' | 'executor'>): Promise<void> {
  const { traceExecutor, traceStore } = await import('../telemetry/instrument.js');
  services.store = traceStore(services.store);
  if (services.executor instanceof SubprocessExecutor) traceExecutor(services.executor);
}

/**
 * The metrics registry of a `--ws` daemon whose `metrics.enabled` holds; the store reports its commits to it.
 * prom-client is loaded only then (a stdio daemon, or one with metrics off, never loads it).
 */
export async function attachMetrics(services: Pick<Services, 'config' | 'store' | 'sessions' | 'subscriptions' | 'metrics'>, host: string): Promise<ToolgateMetrics | undefined> {
  if (!metricsEnabled(services.config.metrics.enabled, host)) return undefined;
  const { ToolgateMetrics } = await import('../telemetry/metrics.js');
  const store = services.store;
  const metrics = new ToolgateMetrics({
    sessions: () => services.sessions.size,
    subscriptions: () => services.subscriptions.count(),
    poolUse: store.poolUse ? () => store.poolUse!() : undefined,
  });
  store.onCommit = metrics.commit;
  services.metrics = metrics;
  return metrics;
}

/** `/healthz`, `/readyz` and (with metrics) `/metrics` for the HTTP server. */
export function daemonOpsRoutes(services: Pick<Services, 'store' | 'metrics' | 'log'>, accepting: () => boolean) {
  return opsRoutes({
    ready: async () => {
      if (!accepting()) return { ready: false, reason: 'draining' };
      return (await storeAnswers(services.store)) ? { ready: true } : { ready: false, reason: 'the store does not answer' };
    },
    scrape: services.metrics ? () => services.metrics!.scrape() : undefined,
    onError: (err) => services.log.log('error', 'ops route failed', { err }),
  });
}
