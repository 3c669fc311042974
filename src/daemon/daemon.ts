import type { Store } from '../store/store.js';
import type { BearerKeySource } from './bearer-auth.js';
import type { DaemonConfig } from './config.js';
import type { SigningKey } from './credential-issuer.js';
import type { Executor } from './executor.js';
import type { Logger } from './logger.js';
import { SessionRegistry } from './sessions.js';
import type { SubscriptionRegistry } from './subscriptions.js';
import type { ThreadListeners } from './ag-ui-stream.js';
import type { UiCache } from './ui-cache.js';

/** The runtime every handler works with; one per process, shared by all connections. */
export interface Daemon {
  /** The store boundary: one unit of work per call (src/store/store.ts). */
  store: Store;
  dbPath: string;
  config: DaemonConfig;
  signingKey: SigningKey;
  bearerKeys: BearerKeySource;
  executor: Executor;
  log: Logger;
  env: NodeJS.ProcessEnv;
  sessions: SessionRegistry;
  subscriptions: SubscriptionRegistry;
  /** Listeners for each thread's newly stored tool messages (the AG-UI event streams). */
  threadListeners: ThreadListeners;
  /** Compiled `ui_schema` of stored messages, so history does not re-parse and recompile them. */
  uiCache: UiCache;
  /** Per-call limit; past it the child is killed and the call fails with TIMEOUT. */
  callTimeoutMs: number;
  version: string;
}

/** The daemon's view of one client connection (stdio, or one WebSocket). */
export interface Connection {
  id: string;
  transport: 'stdio' | 'ws' | 'mcp';
  /** Trusted connections may open automation sessions (stdio always is). */
  trusted: boolean;
  notify(method: string, params: unknown): void;
}

