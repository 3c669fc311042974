import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { once } from 'node:events';
import { createLogger, stderrLines } from '../../../src/runtime/logger.js';

/** A field that records whether anything read or serialized it. */
function probe() {
  const seen = { reads: 0 };
  const fields = {
    get costly() {
      seen.reads++;
      return { toJSON: () => (seen.reads++, 'serialized') };
    },
  };
  return { seen, fields };
}

test('a disabled level does no work: no merge, no serialization, no write', () => {
  const lines: string[] = [];
  const log = createLogger((l) => lines.push(l), 'warn');
  const { seen, fields } = probe();
  // What a request does: a child per request and per call, a line per call.
  const perCall = log.child(fields).child({ request_id: 'r1' });
  perCall.log('info', 'tool call', fields);
  perCall.log('debug', 'request done', fields);
  assert.equal(seen.reads, 0, 'neither the child fields nor the line fields were touched');
  assert.deepEqual(lines, []);
  assert.equal(perCall.enabled('info'), false);
  assert.equal(perCall.enabled('warn'), true);
});

test('an enabled level writes one redacted JSON line with every context field', () => {
  const lines: string[] = [];
  const log = createLogger((l) => lines.push(l), 'info', { service: 'toolgate' });
  const { seen, fields } = probe();
  log.child({ connection: 'c1' }).child(fields).log('info', 'tool call', { status: 'success', note: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl' });
  assert.equal(lines.length, 1);
  const entry = JSON.parse(lines[0]!) as Record<string, unknown>;
  assert.equal(entry.level, 'info');
  assert.equal(entry.service, 'toolgate');
  assert.equal(entry.connection, 'c1');
  assert.equal(entry.costly, 'serialized');
  assert.equal(entry.status, 'success');
  assert.ok(!lines[0]!.includes('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0'), 'a token never reaches the log');
  assert.ok(seen.reads > 0);
});

test('TOOLGATE_LOG_LEVEL chooses the level', () => {
  const before = process.env.TOOLGATE_LOG_LEVEL;
  process.env.TOOLGATE_LOG_LEVEL = 'error';
  try {
    const lines: string[] = [];
    const log = createLogger((l) => lines.push(l));
    log.log('warn', 'skipped');
    log.log('error', 'kept');
    assert.equal(lines.length, 1);
  } finally {
    if (before === undefined) delete process.env.TOOLGATE_LOG_LEVEL;
    else process.env.TOOLGATE_LOG_LEVEL = before;
  }
});

test('stderr lines logged close together go out in one write', async () => {
  const stream = new PassThrough();
  const writes: string[] = [];
  stream.on('data', (c: Buffer) => writes.push(c.toString('utf8')));
  // A window far longer than the test: only the explicit flush (what exit does) writes.
  const write = stderrLines(stream, 60_000);
  write('{"a":1}\n');
  await new Promise((r) => setImmediate(r));
  write('{"b":2}\n');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(writes, [], 'the lines wait for the window');
  write.flush();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(writes, ['{"a":1}\n{"b":2}\n']);
});

test('a logged line is written once its window has passed', async () => {
  const stream = new PassThrough();
  const write = stderrLines(stream, 1);
  // The window's timer is unref'd (it never keeps a daemon alive): hold the loop while waiting for it.
  const hold = setTimeout(() => {}, 30_000);
  try {
    write('{"c":3}\n');
    const [chunk] = (await once(stream, 'data')) as [Buffer];
    assert.equal(chunk.toString('utf8'), '{"c":3}\n');
  } finally {
    clearTimeout(hold);
  }
});

test('a configured secret the logger is told of is masked in every line, its children included', () => {
  const lines: string[] = [];
  const log = createLogger((line) => lines.push(line), 'info');
  const secret = 'service-key-3f9a1c7e55b2';
  log.maskSecrets([secret]);
  log.child({ connection: 'c1' }).log('warn', `unknown method ${secret}`, { detail: { nested: `x${secret}y` } });
  assert.equal(lines.length, 1);
  assert.ok(!lines[0]!.includes(secret), lines[0]);
  assert.match(lines[0]!, /unknown method \[redacted\]/);
});
