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
  userId: string;
  threadId: string;
  sessions: Set<string>;
  stop: () => void;
}

/** How many of the latest tool messages a connection's subscriptions sent it are remembered (see `sentTo`). */
const REMEMBERED_SENT = 256;

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
  /** connection id → ids of the latest tool messages its subscriptions sent it (oldest first). */
  private readonly sent = new Map<string, Set<string>>();

  constructor(
    private readonly bus: ThreadEventBus,
    private readonly maxPerConnection = DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION,
  ) {}

  /** Subscriptions held now, all connections together (metrics). */
  count(): number {
    let n = 0;
    for (const c of this.perConnection.values()) n += c;
    return n;
  }

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
      const stop = this.bus.listen(userId, threadId, (event) => {
        if (notifyOf(conn, event)) this.remember(conn.id, event.row.id);
      });
      watches.set(key, (watch = { conn, userId, threadId, sessions: new Set(), stop }));
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

  /**
   * Whether a subscription of this connection already sent it the message
   * `messageId` — a copy that knew no caller (the store's, read to fill a gap
   * before the call's own publish came): the caller then needs no second.
   * Asked once per call, so the answer is forgotten as it is given; kept per
   * connection, so an unsubscribe in between does not lose it.
   */
  sentTo(connId: string, messageId: string): boolean {
    return this.sent.get(connId)?.delete(messageId) ?? false;
  }

  private remember(connId: string, messageId: string): void {
    let ids = this.sent.get(connId);
    if (!ids) this.sent.set(connId, (ids = new Set()));
    ids.add(messageId);
    if (ids.size > REMEMBERED_SENT) ids.delete(ids.values().next().value!);
  }

  /** Drops every subscription one session holds on a connection (the session ended: its token expired). */
  dropSession(connId: string, sessionId: string): void {
    for (const watch of [...(this.byConnection.get(connId)?.values() ?? [])]) {
      if (watch.sessions.has(sessionId)) this.unsubscribe(watch.userId, watch.threadId, connId, sessionId);
    }
  }

  dropConnection(connId: string): void {
    for (const watch of this.byConnection.get(connId)?.values() ?? []) watch.stop();
    this.byConnection.delete(connId);
    this.perConnection.delete(connId);
    this.sent.delete(connId);
  }
}

/** A stored tool message as the `tool/result` notifications a watcher gets (true when sent); text messages have none. */
function notifyOf(conn: Peer, { threadId, row, origin }: StoredMessageEvent): boolean {
  if (row.role !== 'tool' || origin === conn.id) return false;
  const output = (JSON.parse(row.metadata) as { tool_agent_output?: ToolAgentOutput }).tool_agent_output;
  if (!output) return false;
  for (const n of notificationsFor(threadId, output, compileStoredUi, deriveUiHints)) conn.notify('tool/result', n);
  return true;
}
