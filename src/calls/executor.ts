/**
 * How an admitted call runs across the restricted boundary. Each executor is
 * an object that owns its whole run path — the stored answer, the
 * credential and its audit, the run, the tool message — so the call service
 * (tool-calls.ts, tool-invoke.ts) never asks which one it has:
 *
 * - `InProcessExecutor` (inprocess-executor.ts): the CLI core in this
 *   process, everything in one unit of work on the daemon's connection.
 * - `SubprocessExecutor` (subprocess-executor.ts): project-cli in a child
 *   process per call, which commits through its own connection; the daemon
 *   falls back to the child's call record when the child was cut short.
 *
 * Both return byte-identical results for the same call.
 */
import type { Store } from '../store/store.js';
import type { SigningKey } from '../auth/credential-issuer.js';
import type { AdmittedCall, Outcome } from './call.js';
import type { Logger } from '../runtime/logger.js';
import type { CallPrincipal } from './call.js';

/** What an executor needs of the daemon. */
export interface ExecDeps {
  store: Store;
  /** The key the call's controlled credential is signed with. */
  signingKey: SigningKey;
  /** The database the child opens (subprocess executor). */
  dbPath: string;
  /** A call's time limit (`limits.action_timeout_ms`, else `limits.call_timeout_ms`). */
  timeoutMs(action: string): number;
  /** A stopped child: SIGTERM, then SIGKILL after this long. */
  cancelGraceMs: number;
  /** `limits.max_result_bytes`, bound into each credential. */
  maxResultBytes: number;
}

export interface Executor {
  readonly kind: 'subprocess' | 'inprocess';
  /**
   * Runs an admitted call and stores its tool message, or answers from the
   * store when the call was stored before. A StoreConflictError means a
   * concurrent twin stored first (the caller reads the winner).
   * `optimistic`: the store may be asked to assume the call is new
   * (`Tx.assumeNewCall`) rather than read it first — a stored one then ends
   * the unit in StoreConflictError as a twin would.
   * `signal` (the call's, src/calls/running-calls.ts): once it aborts with a
   * CallStopped, the executor stops the call's work and stores the call as
   * failed with that code — unless the work had committed, whose outcome
   * then stands.
   */
  execute(deps: ExecDeps, session: CallPrincipal, call: AdmittedCall, log: Logger, optimistic?: boolean, signal?: AbortSignal): Promise<Outcome>;
  /** Settles once whatever the executor started for calls already answered is over (shutdown waits for it). */
  drain?(): Promise<void>;
}
