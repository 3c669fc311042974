/**
 * Waits for a condition instead of sleeping a fixed time: polls `check`
 * until it returns something truthy (which is returned), and fails with
 * `what` after `timeoutMs`. The timeout is a ceiling for a hung daemon,
 * never a measurement.
 */
export async function waitFor<T>(check: () => T | Promise<T>, what: string, timeoutMs = 15_000, everyMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
