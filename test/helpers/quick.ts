/**
 * `TOOLGATE_TEST_QUICK=1` skips the soak and fuzz suites (test/soak, test/fuzz)
 * on a developer machine: they run for minutes and test what the other suites'
 * cases do not (volume, random input), so CI always runs them — `.ci/run` never
 * sets the variable, and `npm test` without it runs everything. A skipped suite
 * says so in the test output, with this reason.
 */
export const QUICK: boolean = process.env.TOOLGATE_TEST_QUICK === '1';

/** node:test options for a soak or fuzz case: skipped when QUICK. */
export function slowSuite<T extends object>(opts: T): T & { skip?: string } {
  return QUICK ? { ...opts, skip: 'TOOLGATE_TEST_QUICK=1 skips soak and fuzz (CI runs them)' } : opts;
}
