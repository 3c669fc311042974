/**
 * Holds a daemon (in this process) right after the transaction that
 * approves one call has committed, before the daemon goes on to run it:
 * the window a cancel must still reach. Only that transaction is held —
 * the first after which the call's row says `running` — not whatever other
 * transaction (an expiry sweep, another call) comes first.
 */
import type { Store } from '../../src/store/store.js';
import type { CallKey } from '../../src/calls/running-calls.js';

export interface ApprovalHold {
  /** Settles once the approval has committed and its caller is held. */
  committed: Promise<void>;
  /** Lets the daemon go on. */
  release(): void;
  /** Puts the store's own `transaction` back (also once the hold has happened). */
  restore(): void;
}

export function holdAfterApproval(store: Store, key: CallKey): ApprovalHold {
  const original = store.transaction.bind(store);
  let committed!: () => void;
  const held = new Promise<void>((r) => (committed = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const restore = () => {
    store.transaction = original;
  };
  store.transaction = (async (...args: Parameters<Store['transaction']>) => {
    const result = await original(...args);
    if ((await store.read((tx) => tx.pendingCalls.get(key)))?.state === 'running') {
      restore();
      committed();
      await gate;
    }
    return result;
  }) as Store['transaction'];
  return { committed: held, release, restore };
}
