// A node:test reporter for TOOLGATE_TEST_TIMES=1 (scripts/run-tests.mjs):
// one JSON line per test file, `{ file, ms }`, from the runner's own
// `test:complete` event of the file (its wall time, child process included);
// and one per suite of an e2e group process (scripts/test-files.mjs),
// `{ file, ms, grouped: true }`, from the `describe` each is wrapped in (its
// name is the suite's file; the event's `file` is where that describe is).
const GROUPED = /[/\\]scripts[/\\]test-files\.mjs$/;

export default async function* fileTimes(source) {
  for await (const event of source) {
    if (event.type !== 'test:complete') continue;
    const { nesting, name, file, details } = event.data;
    if (nesting === 0 && name === file) yield `${JSON.stringify({ file, ms: details.duration_ms })}\n`;
    else if (nesting === 0 && GROUPED.test(file ?? '')) yield `${JSON.stringify({ file: name, ms: details.duration_ms, grouped: true })}\n`;
  }
}
