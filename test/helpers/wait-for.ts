/**
 * The one way a test waits for something (no fixed sleeps): polls `check`
 * until it returns something truthy (which is returned), and fails with
 * `what` after `timeoutMs`. `what` may be a function, called only then, to
 * say what was seen instead. A check that throws counts as "not yet" (a
 * probe refused while the daemon starts, say); the last error is in the
 * failure. The timeout is a ceiling for a hung daemon, never a measurement.
 */
export async function waitFor<T>(check: () => T | Promise<T>, what: string | (() => string), timeoutMs = 15_000, everyMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let failure: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      failure = err;
    }
    if (Date.now() > deadline) {
      const said = typeof what === 'function' ? what() : what;
      throw new Error(`timed out waiting for ${said}${failure === undefined ? '' : ` (last failure: ${String(failure)})`}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
