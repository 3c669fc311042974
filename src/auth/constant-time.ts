import { createHash, timingSafeEqual } from 'node:crypto';

/** Compares two secrets in constant time (hashing first hides their lengths). */
export function constantTimeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}
