/**
 * Races of an approval against a cancel, made deterministic in process.
 *
 * `holdAfterApproval` holds a daemon right after the transaction that
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

export interface TransactionGate {
  /** Settles once the store's next transaction has been asked for, and is held before it begins. */
  entered: Promise<void>;
  /** Lets it begin. */
  release(): void;
}

/**
 * Holds the store's next transaction before it begins (a cancel's ending of a call awaiting approval, say), so
 * that something else — an approval — can commit first. The store's own `transaction` is back at once.
 */
export function gateNextTransaction(store: Store): TransactionGate {
  const original = store.transaction.bind(store);
  let entered!: () => void;
  const reached = new Promise<void>((r) => (entered = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  store.transaction = (async (...args: Parameters<Store['transaction']>) => {
    store.transaction = original;
    entered();
    await gate;
    return original(...args);
  }) as Store['transaction'];
  return { entered: reached, release };
}
