/**
 * The Prometheus registry of one daemon (`GET /metrics`, prom-client). Labels
 * carry only bounded values: the action comes from the action table (an
 * action it does not name is `unknown`), status, executor and transport are
 * small enums. No user id, thread id, call id or token is ever a label.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CommitListener, PoolUse } from '../store/store.js';

/** What the gauges read when scraped (the daemon's registries, the store's pool). */
export interface MetricSources {
  sessions(): number;
  subscriptions(): number;
  poolUse?: (() => PoolUse) | undefined;
}

export interface CallLabels {
  action: string;
  executor: string;
  transport: string;
}

export class ToolgateMetrics {
  readonly registry = new Registry();
  private readonly calls: Counter<'action' | 'status' | 'executor' | 'transport'>;
  private readonly duration: Histogram<'action' | 'executor' | 'transport'>;
  private readonly inFlight: Gauge<'transport'>;
  private readonly commitSeconds: Histogram;
  private readonly groupSize: Histogram;
  private readonly quotaRejections: Counter<'action'>;
  private readonly reloads: Counter<'result'>;

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    // Gauges whose names end in _total, which `promtool check metrics` refuses; their per-type twins
    // (nodejs_active_handles, nodejs_active_requests, nodejs_active_resources) stay.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
      this.registry.removeSingleMetric(name);
    }
    this.calls = new Counter({
      name: 'toolgate_tool_calls_total',
      help: 'Tool calls answered, by action, status (success, partial, failure, error), executor and transport.',
      labelNames: ['action', 'status', 'executor', 'transport'],
      registers,
    });
    this.duration = new Histogram({
      name: 'toolgate_tool_call_duration_seconds',
      help: 'Time from a tool call received to its answer.',
      labelNames: ['action', 'executor', 'transport'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.quotaRejections = new Counter({
      name: 'toolgate_quota_rejections_total',
      help: 'Tool calls refused RATE_LIMITED by a quota (nothing ran), by action.',
      labelNames: ['action'],
      registers,
    });
    this.reloads = new Counter({
      name: 'toolgate_config_reloads_total',
      help: 'Configuration reloads (SIGHUP): ok, or rejected (the file did not validate; nothing changed).',
      labelNames: ['result'],
      registers,
    });
    // Both results are exposed from the start, so a dashboard sees 0 rather than nothing.
    this.reloads.inc({ result: 'ok' }, 0);
    this.reloads.inc({ result: 'rejected' }, 0);
    this.inFlight = new Gauge({ name: 'toolgate_tool_calls_in_flight', help: 'Tool calls running now.', labelNames: ['transport'], registers });
    new Gauge({
      name: 'toolgate_sessions_open',
      help: 'Sessions open on live connections.',
      registers,
      collect() {
        this.set(sources.sessions());
      },
    });
    new Gauge({
      name: 'toolgate_subscriptions_open',
      help: 'Thread subscriptions held by live connections.',
      registers,
      collect() {
        this.set(sources.subscriptions());
      },
    });
    this.commitSeconds = new Histogram({
      name: 'toolgate_store_commit_duration_seconds',
      help: 'Time of one store transaction, from its start to the end of its durable COMMIT.',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers,
    });
    this.groupSize = new Histogram({
      name: 'toolgate_store_commit_group_size',
      help: 'Units of work made durable by one commit (SQLite group commit; always 1 on PostgreSQL).',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128],
      registers,
    });
    const poolUse = sources.poolUse;
    if (poolUse) {
      new Gauge({
        name: 'toolgate_pg_pool_connections',
        help: 'PostgreSQL pool connections by state (idle, busy).',
        labelNames: ['state'],
        registers,
        collect() {
          const use = poolUse();
          this.set({ state: 'idle' }, use.idle);
          this.set({ state: 'busy' }, use.total - use.idle);
        },
      });
      new Gauge({
        name: 'toolgate_pg_pool_waiting',
        help: 'Units of work waiting for a PostgreSQL pool connection.',
        registers,
        collect() {
          this.set(poolUse().waiting);
        },
      });
    }
  }

  /**
   * A call's request started; the returned function records its end with the response's status, or
   * with null when the request ended without answering the call (an MCP host asks its user: the call is
   * counted once, by the request that answers it — not twice for one elicited call).
   */
  callStarted(labels: CallLabels): (status: string | null) => void {
    this.inFlight.inc({ transport: labels.transport });
    const stop = this.duration.startTimer(labels);
    return (status) => {
      this.inFlight.dec({ transport: labels.transport });
      if (status === null) return;
      stop();
      this.calls.inc({ action: labels.action, status, executor: labels.executor, transport: labels.transport });
    };
  }

  /** A call refused by a quota. `action` is an action of the table (the call was admitted). */
  quotaRejected(action: string): void {
    this.quotaRejections.inc({ action });
  }

  /** A configuration reload, applied or rejected. */
  configReloaded(result: 'ok' | 'rejected'): void {
    this.reloads.inc({ result });
  }

  /** For `Store.onCommit`. */
  readonly commit: CommitListener = (seconds, units) => {
    this.commitSeconds.observe(seconds);
    this.groupSize.observe(units);
  };

  /** The text exposition and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
