/**
 * What the transports hand to the services below them, composed once by
 * `serve` (src/app/serve.ts). It is no service of its own: its type is the
 * intersection of what each service declares it needs (`SessionOpenDeps`,
 * `ToolInvokeDeps`, `HistoryDeps`, …), and every module below src/rpc is
 * given only its own narrow part — none of them imports this file, and no
 * module of src/rpc does either. Each transport takes the serve context as
 * `ServeContext<S>`, `S` the part it reads: the dispatcher and a
 * connection's binding take `DispatchDeps` (src/rpc/dispatcher.ts, composed
 * from the services' own deps types, each handler narrowed where it reads
 * them itself), the HTTP routes and the MCP modules their own (`CallRouteDeps`,
 * `AgUiDeps`, `McpSessionDeps`, `McpTasksDeps`, `McpCallDeps`, `McpServerDeps`,
 * `McpStdioDeps`, `McpHttpDeps`,
 * the OAuth route's `Pick`). Only `src/app` holds the whole set (`serve`, the
 * `--ws` listener); its config reload and observability take `Pick`s of it.
 * The few fields here beside those are the transports' own (the executor's
 * kind for `initialize` and the metrics labels, the version, the Prometheus
 * registry). Live settings a reload changes (`config`, the time limits) are
 * fields of this one object, so every service reads the new value.
 */
import type { SessionOpenDeps } from '../sessions/session-open.js';
import type { ReloadTarget } from '../sessions/profile-reload.js';
import type { ServerFacts } from '../sessions/initialize.js';
import type { HistoryDeps } from '../threads/history.js';
import type { ToolInvokeDeps } from '../calls/tool-invoke.js';
import type { DecideDeps } from '../calls/approvals.js';
import type { CallServiceDeps } from '../calls/call-service.js';
import type { Executor } from '../calls/executor.js';
import type { ToolgateMetrics } from '../telemetry/metrics.js';
import type { PgFanout } from '../threads/pg-fanout.js';
import type { ToolCalls } from '../calls/tool-calls.js';

export interface Services extends SessionOpenDeps, ReloadTarget, ServerFacts, HistoryDeps, ToolInvokeDeps, DecideDeps, CallServiceDeps {
  executor: Executor;
  /** The call service: the one way a tool call runs (JSON-RPC, MCP, automation). */
  toolCalls: ToolCalls;
  /** The Prometheus registry when `metrics.enabled` (src/telemetry/metrics.ts); tool calls count into it. */
  metrics?: ToolgateMetrics | undefined;
  /** PostgreSQL only: the cross-daemon fan-out (LISTEN/NOTIFY) feeding the thread-event bus. */
  fanout?: PgFanout | undefined;
}
