import { DaemonError } from './errors.js';
import { notificationsFor, type ToolAgentOutput } from '../codec/tool-output.js';
import { deriveUiHints } from '../codec/ui-hints.js';
import type { Peer } from './peer.js';
import type { StoredMessageEvent, ThreadEventBus } from './thread-events.js';
import { threadKey } from './thread-key.js';
import { compileStoredUi } from './ui.js';

/** Contract section 13: subscriptions per connection are capped (`limits.max_subscriptions_per_connection`). */
export const DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION = 256;

interface Watch {
  conn: Peer;
  sessions: Set<string>;
  stop: () => void;
}

/**
 * Who watches which thread: `thread/subscribe` adds (connection, session).
 * Each watching connection listens on the thread-event bus once, however
 * many of its sessions subscribed, and turns every tool message stored in
 * the thread into its `tool/result` notifications — whichever connection,
 * or daemon, made the call. The connection that made it got them directly
 * with its response, so it is skipped here. A thread is `(user, thread_id)`:
 * a subscriber hears only its own user's calls. Subscribing writes nothing.
 * Closing a connection drops its subscriptions.
 */
export class SubscriptionRegistry {
  /** connection id → `(user, thread)` key → its watch. */
  private readonly byConnection = new Map<string, Map<string, Watch>>();
  /** connection id → (session, thread) pairs it holds, for the cap. */
  private readonly perConnection = new Map<string, number>();

  constructor(
    private readonly bus: ThreadEventBus,
    private readonly maxPerConnection = DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION,
  ) {}

  subscribe(userId: string, threadId: string, conn: Peer, sessionId: string): void {
    let watches = this.byConnection.get(conn.id);
    const key = threadKey(userId, threadId);
    const existing = watches?.get(key);
    if (existing?.sessions.has(sessionId)) return;
    const count = this.perConnection.get(conn.id) ?? 0;
    if (count >= this.maxPerConnection) {
      throw new DaemonError(
        'OVERLOADED',
        `too many subscriptions on this connection (limit ${this.maxPerConnection}, limits.max_subscriptions_per_connection)`,
      );
    }
    if (!watches) this.byConnection.set(conn.id, (watches = new Map()));
    let watch = existing;
    if (!watch) {
      const stop = this.bus.listen(userId, threadId, (event) => notifyOf(conn, event));
      watches.set(key, (watch = { conn, sessions: new Set(), stop }));
    }
    watch.sessions.add(sessionId);
    this.perConnection.set(conn.id, count + 1);
  }

  unsubscribe(userId: string, threadId: string, connId: string, sessionId: string): boolean {
    const watches = this.byConnection.get(connId);
    const key = threadKey(userId, threadId);
    const watch = watches?.get(key);
    if (!watch || !watch.sessions.delete(sessionId)) return false;
    this.perConnection.set(connId, (this.perConnection.get(connId) ?? 1) - 1);
    if (watch.sessions.size === 0) {
      watch.stop();
      watches!.delete(key);
    }
    if (watches!.size === 0) {
      this.byConnection.delete(connId);
      this.perConnection.delete(connId);
    }
    return true;
  }

  /** Whether this connection watches the user's thread (through any of its sessions). */
  watches(userId: string, threadId: string, connId: string): boolean {
    return this.byConnection.get(connId)?.has(threadKey(userId, threadId)) ?? false;
  }

  dropConnection(connId: string): void {
    for (const watch of this.byConnection.get(connId)?.values() ?? []) watch.stop();
    this.byConnection.delete(connId);
    this.perConnection.delete(connId);
  }
}

/** A stored tool message as the `tool/result` notifications a watcher gets; text messages have none. */
function notifyOf(conn: Peer, { threadId, row, origin }: StoredMessageEvent): void {
  if (row.role !== 'tool' || origin === conn.id) return;
  const output = (JSON.parse(row.metadata) as { tool_agent_output?: ToolAgentOutput }).tool_agent_output;
  if (!output) return;
  for (const n of notificationsFor(threadId, output, compileStoredUi, deriveUiHints)) conn.notify('tool/result', n);
}
