/**
 * The threads this page watches (`thread/subscribe`): one owner for every
 * subscription of the connection, so that the conversation and the approval
 * list never undo each other's. The page watches the user's most recent
 * threads, not only the selected one: a call waiting for a person's approval
 * (`tool/approval`) reaches only the thread's subscribers, wherever it was made.
 *
 * Subscriptions live on the connection: when it closes the daemon drops them
 * all, and `connectionLost` forgets them here too.
 */
import { describeError, type RpcClient } from './rpc-client.js';
import type { SessionOpenResult } from './wire.js';

/**
 * At most this many threads are watched: the daemon caps subscriptions per
 * connection (`limits.max_subscriptions_per_connection`, 256 by default).
 */
export const MAX_WATCHED_THREADS = 50;

export class ThreadWatches {
  private readonly watched = new Set<string>();
  private readonly inFlight = new Map<string, Promise<boolean>>();
  /** Bumped on reset: an answer for an older session is dropped. */
  private generation = 0;

  constructor(
    private readonly rpc: () => RpcClient | null,
    private readonly session: () => SessionOpenResult | null,
    private readonly failed: (threadId: string, reason: string) => void,
  ) {}

  has(threadId: string): boolean {
    return this.watched.has(threadId);
  }

  /** Watches the thread (idempotent); resolves true once the daemon confirmed it. */
  watch(threadId: string): Promise<boolean> {
    if (this.watched.has(threadId)) return Promise.resolve(true);
    const pending = this.inFlight.get(threadId);
    if (pending) return pending;
    const rpc = this.rpc();
    const session = this.session();
    if (!rpc || !session) return Promise.resolve(false);
    const generation = this.generation;
    const request = rpc
      .request('thread/subscribe', { session_id: session.session_id, thread_id: threadId }, { timeoutMs: 15_000 })
      .then(
        () => {
          if (generation !== this.generation) return false;
          this.watched.add(threadId);
          return true;
        },
        (err: unknown) => {
          if (generation === this.generation) this.failed(threadId, describeError(err));
          return false;
        },
      )
      .finally(() => {
        if (this.inFlight.get(threadId) === request) this.inFlight.delete(threadId);
      });
    this.inFlight.set(threadId, request);
    return request;
  }

  /** Watches the first `MAX_WATCHED_THREADS` of these (most recent first), besides what is watched already. */
  async watchAll(threadIds: readonly string[]): Promise<void> {
    const room = Math.max(0, MAX_WATCHED_THREADS - this.watched.size);
    const fresh = threadIds.filter((id) => !this.watched.has(id)).slice(0, room);
    await Promise.all(fresh.map((id) => this.watch(id)));
  }

  /** A new session or sign-out: unsubscribes everything (the daemon keeps subscriptions per session). */
  reset(): void {
    const rpc = this.rpc();
    const session = this.session();
    if (rpc && session) {
      for (const threadId of this.watched) {
        rpc.request('thread/unsubscribe', { session_id: session.session_id, thread_id: threadId }).catch(() => {});
      }
    }
    this.forget();
  }

  /** The connection closed: the daemon dropped every subscription with it. */
  connectionLost(): void {
    this.forget();
  }

  private forget(): void {
    this.generation++;
    this.watched.clear();
    this.inFlight.clear();
  }
}
