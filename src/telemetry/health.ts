/**
 * Readiness: the daemon takes calls (not draining) and its store answers a
 * query within a bound. Liveness needs nothing: answering is the proof.
 */
import type { Store } from '../store/store.js';

/** A store that does not answer within this is not ready (a load balancer should stop sending). */
const STORE_PROBE_TIMEOUT_MS = 2_000;

/** Whether a point read (a primary-key lookup that finds nothing) completes in time on the store's own path. */
export async function storeAnswers(store: Store, timeoutMs = STORE_PROBE_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const probe = store.read((tx) => tx.messages.getToolMessage('', '', '')).then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([probe, late]);
  } finally {
    clearTimeout(timer);
  }
}
