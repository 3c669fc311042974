/**
 * A call whose MCP host is asking its user (2025-11-25: the server's own
 * `elicitation/create`, sent by the SDK's legacy shim within the
 * `tools/call`), followed while the question is open (contract section 17):
 * decided meanwhile on another surface, or expired, the `tools/call`
 * answers with that outcome and the question is withdrawn, rather than
 * wait for an answer that can change nothing; the host cancelling its
 * `tools/call` while its user is asked cancels the call, as
 * `notifications/cancelled` does any call. The seam is TaskServer's
 * (mcp-task-server.ts); this is what it asks of the daemon.
 */
import type { InputRequiredResult } from '@modelcontextprotocol/server';
import { endPending, isExpired, type PendingDeps } from '../calls/pending-calls.js';
import type { CallKey } from '../calls/running-calls.js';
import { stateCallOf } from './mcp-approval.js';

/** How often the open question's call is read again (a decision in another process wakes no one here). */
const POLL_MS = 1000;

/** The call an open question is about, as a `tools/call`'s `_meta` names it. */
export interface AskedCall {
  threadId: string;
  toolCallId: string;
}

/** What TaskServer asks of the daemon about a call its host's user is asked about. */
export interface AskedCalls {
  /** The call an `input_required` result of ours asks about, or undefined. */
  callOf(result: InputRequiredResult): AskedCall | undefined;
  /** Resolves once the call no longer awaits approval (decided elsewhere, or ended expired now), or `signal` aborts. */
  untilDecided(call: AskedCall, signal: AbortSignal): Promise<void>;
  /** The host gave up its request while its user was asked: the call ends CANCELLED if it still awaits approval. */
  cancel(call: AskedCall): Promise<void>;
}

export class HostAskedCalls implements AskedCalls {
  constructor(
    private readonly deps: PendingDeps,
    private readonly userId: string,
  ) {}

  callOf(result: InputRequiredResult): AskedCall | undefined {
    return typeof result.requestState === 'string' ? stateCallOf(result.requestState) : undefined;
  }

  async untilDecided(call: AskedCall, signal: AbortSignal): Promise<void> {
    const key: CallKey = { userId: this.userId, ...call };
    while (!signal.aborted) {
      const wake = new AbortController();
      const stop = () => wake.abort();
      signal.addEventListener('abort', stop, { once: true });
      // Listening before the read: a decision between the two still wakes it.
      const next = this.deps.approvals.next(key, wake.signal);
      try {
        const row = await this.deps.store.read((tx) => tx.pendingCalls.get(key));
        if (row?.state !== 'awaiting_approval') return;
        if (isExpired(row)) {
          await endPending(this.deps, key, { decision: 'expire', surface: 'ttl' });
          return;
        }
        const timer = setTimeout(stop, Math.min(POLL_MS, Math.max(0, Date.parse(row.expiresAt) - Date.now())));
        await next;
        clearTimeout(timer);
      } finally {
        wake.abort();
        signal.removeEventListener('abort', stop);
      }
    }
  }

  async cancel(call: AskedCall): Promise<void> {
    await endPending(this.deps, { userId: this.userId, ...call }, { decision: 'cancel', surface: 'cancel_request' });
  }
}
