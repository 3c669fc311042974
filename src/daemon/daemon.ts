import type { CallKeyOf, Store } from '../store/store.js';
import type { BearerKeySource } from './bearer-auth.js';
import type { ProtectedResource } from './protected-resource.js';
import type { DaemonConfig } from './config.js';
import type { SigningKey } from './credential-issuer.js';
import type { Executor } from './executor.js';
import type { Logger } from './logger.js';
import { SessionRegistry } from './sessions.js';
import type { SubscriptionRegistry } from './subscriptions.js';
import type { ThreadEventBus } from './thread-events.js';
import type { UiCache } from './ui-cache.js';
import type { PgFanout } from './pg-fanout.js';
import type { ToolgateMetrics } from '../telemetry/metrics.js';
import type { RunningCalls } from '../calls/running-calls.js';
import type { ApprovalWaiters } from '../calls/approval-waiters.js';

/** The runtime every handler works with; one per process, shared by all connections. */
export interface Daemon {
  /** The store boundary: one unit of work per call (src/store/store.ts). */
  store: Store;
  dbPath: string;
  config: DaemonConfig;
  signingKey: SigningKey;
  /** TOOLGATE_BEARER_SECRET / _JWKS (or the dev secret); null when only `auth.issuer` verifies tokens. */
  bearerKeys: BearerKeySource | null;
  /** `auth.issuer` set: its access tokens are accepted too, and `/mcp` is an OAuth protected resource. */
  oauth?: ProtectedResource;
  executor: Executor;
  log: Logger;
  env: NodeJS.ProcessEnv;
  sessions: SessionRegistry;
  /** Every message stored in a thread, published once after its commit (subscriptions and AG-UI streams listen). */
  threadEvents: ThreadEventBus;
  /** `thread/subscribe` bookkeeping; a consumer of `threadEvents`. */
  subscriptions: SubscriptionRegistry;
  /** Compiled `ui_schema` of stored messages, so history does not re-parse and recompile them. */
  uiCache: UiCache;
  /**
   * PostgreSQL only: the cross-daemon fan-out (LISTEN/NOTIFY). Watching a
   * thread makes other daemons' stored messages of it reach this daemon's
   * subscribers and AG-UI streams; resolves once nothing later can be missed.
   */
  fanout?: PgFanout;
  /** The default per-call limit (`limits.call_timeout_ms`). */
  callTimeoutMs: number;
  /** A call's time limit: `limits.action_timeout_ms` for its action, else `callTimeoutMs`; past it the call is stopped (TIMEOUT). */
  timeoutMs(action: string): number;
  /** A stopped subprocess call: SIGTERM, then SIGKILL after this long (`limits.cancel_grace_ms`). */
  cancelGraceMs: number;
  /** The calls running in this daemon now, each stoppable (contract section 16). */
  calls: RunningCalls;
  /** `limits.max_result_bytes`: a call whose result projection is larger fails RESULT_TOO_LARGE (bound into each credential). */
  maxResultBytes: number;
  /** Requests of this daemon waiting for a decision on a call awaiting approval (contract section 17). */
  approvals: ApprovalWaiters;
  /** PostgreSQL: tells every daemon that a call's approval state changed (their waiters look again). */
  announceCall?: (key: CallKeyOf) => Promise<void>;
  version: string;
  /** The Prometheus registry when `metrics.enabled` (src/telemetry/metrics.ts); tool calls count into it. */
  metrics?: ToolgateMetrics;
  /** Configured secrets (bearer secret, service key, signing key): text carrying one verbatim is refused (secret-scan.ts). */
  secrets?: readonly string[];
}
