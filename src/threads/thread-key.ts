/**
 * Threads are a per-user namespace (contract §3): `(user, thread_id)`. In
 * memory (subscriptions, event-stream listeners) a thread is keyed by this
 * unambiguous string, so equal thread ids of two users never meet: the user
 * id's length comes first, so no split of one key reads as another (a
 * concatenation, not a JSON.stringify: it is built twice on every call).
 */
export function threadKey(userId: string, threadId: string): string {
  return `${userId.length}:${userId}${threadId}`;
}
