// Each pass's test runner (scripts/run-tests.mjs starts it, for SQLite, then PostgreSQL): node:test's
// run() over the files in the order given, `concurrency` at a time. Not
// `node --test FILES`: that sorts the files by name, so the slowest ones
// (e2e/package-tarball, e2e/pg-*) started last and ran alone at the end.
// Prints the TAP report on stdout; with a times log, also one line per file
// there (scripts/file-times-reporter.mjs). Exit code 1 when a test failed.
//
// usage: node scripts/run-suites.mjs CONCURRENCY TIMES_LOG|- FILE…
import { createWriteStream } from 'node:fs';
import { PassThrough, Readable } from 'node:stream';
import { run } from 'node:test';
import { tap } from 'node:test/reporters';
import fileTimes from './file-times-reporter.mjs';

const [concurrency, timesLog, ...files] = process.argv.slice(2);
const events = run({ files, concurrency: Number(concurrency) });
events.on('test:fail', () => (process.exitCode = 1));
const toTap = new PassThrough({ objectMode: true });
events.pipe(toTap);
Readable.from(tap(toTap)).pipe(process.stdout);
if (timesLog !== '-') {
  const toTimes = new PassThrough({ objectMode: true });
  events.pipe(toTimes);
  Readable.from(fileTimes(toTimes)).pipe(createWriteStream(timesLog));
}
