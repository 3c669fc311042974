/**
 * Threads are a per-user namespace (contract §3): `(user, thread_id)`. In
 * memory (subscriptions, event-stream listeners) a thread is keyed by this
 * unambiguous string, so equal thread ids of two users never meet.
 */
export function threadKey(userId: string, threadId: string): string {
  return JSON.stringify([userId, threadId]);
}
