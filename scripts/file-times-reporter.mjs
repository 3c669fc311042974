// A node:test reporter for TOOLGATE_TEST_TIMES=1 (scripts/run-tests.mjs):
// one JSON line per test file, `{ file, ms }`, from the runner's own
// `test:complete` event of the file (its wall time, child process included).
export default async function* fileTimes(source) {
  for await (const event of source) {
    if (event.type === 'test:complete' && event.data.nesting === 0 && event.data.name === event.data.file) {
      yield `${JSON.stringify({ file: event.data.file, ms: event.data.details.duration_ms })}\n`;
    }
  }
}
