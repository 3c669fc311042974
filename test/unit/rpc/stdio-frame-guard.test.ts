/**
 * The stdio frame guard (src/rpc/stdio-frame-guard.ts) passes frames through
 * untouched, whatever the reads' boundaries, and hands the reader every whole
 * frame of a read in one piece (so vscode-jsonrpc's reader never arms its
 * partial-message timer for a frame that is all there); a frame over the cap
 * is discarded, and a broken header stops the stream after the whole frames
 * before it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StdioFrameGuard } from '../../../src/rpc/stdio-frame-guard.js';

const frame = (body: string, header = `Content-Length: ${Buffer.byteLength(body)}`) => Buffer.from(`${header}\r\n\r\n${body}`);

function guarded(maxMessageBytes = 1024) {
  const pushes: Buffer[] = [];
  const events: string[] = [];
  const guard = new StdioFrameGuard({
    maxMessageBytes,
    onTooLarge: (declared) => events.push(`too large ${declared}`),
    onFatal: (reason) => events.push(`fatal ${reason}`),
    onJsonLine: () => events.push('json line'),
  });
  guard.on('data', (b: Buffer) => pushes.push(b));
  const feed = async (chunks: Buffer[]) => {
    for (const c of chunks) await new Promise<void>((resolve, reject) => guard.write(c, (err) => (err ? reject(err) : resolve())));
  };
  return { pushes, events, feed, text: () => Buffer.concat(pushes).toString() };
}

test('whole frames of one read reach the reader as one piece', async () => {
  const g = guarded();
  const three = Buffer.concat([frame('{"a":1}'), frame('{"b":2}'), frame('{"c":3}')]);
  await g.feed([three]);
  assert.equal(g.pushes.length, 1);
  assert.equal(g.text(), three.toString());
});

test('frames split at every byte still pass through unchanged', async () => {
  const bytes = Buffer.concat([frame('{"a":"é"}'), frame('{"b":[1,2,3]}', 'Content-Type: application/json\r\nContent-Length: 13')]);
  for (let cut = 1; cut < bytes.length; cut++) {
    const g = guarded();
    await g.feed([bytes.subarray(0, cut), bytes.subarray(cut)]);
    assert.equal(g.text(), bytes.toString(), `cut at ${cut}`);
    assert.deepEqual(g.events, []);
  }
  const g = guarded();
  await g.feed([...bytes].map((b) => Buffer.from([b])));
  assert.equal(g.text(), bytes.toString());
});

test('a frame over the cap is discarded between whole frames that pass', async () => {
  const g = guarded(16);
  await g.feed([Buffer.concat([frame('{"a":1}'), frame(`"${'x'.repeat(40)}"`), frame('{"c":3}')])]);
  assert.equal(g.text(), `${frame('{"a":1}')}${frame('{"c":3}')}`);
  assert.deepEqual(g.events, ['too large 42']);
});

test('a broken header stops the stream after the whole frames before it', async () => {
  const g = guarded();
  await g.feed([Buffer.concat([frame('{"a":1}'), Buffer.from('Content-Length: x\r\n\r\n{}')])]);
  assert.equal(g.text(), frame('{"a":1}').toString());
  assert.deepEqual(g.events, ['fatal Content-Length is not a non-negative integer']);
});

test('a JSON line where a header should start is reported at once, after the whole frames before it', async () => {
  const g = guarded();
  await g.feed([Buffer.concat([frame('{"a":1}'), Buffer.from('\n{"jsonrpc":"2.0","id":1')])]);
  assert.deepEqual(g.events, ['json line']);
  assert.equal(g.text(), frame('{"a":1}').toString());
  const h = guarded();
  await h.feed([Buffer.from('['), Buffer.from('{"jsonrpc":"2.0"}]\n')]);
  assert.deepEqual(h.events, ['json line']);
});

test('header bytes vscode-jsonrpc would read otherwise stop the stream: a bare CR or LF, a byte outside ASCII', async () => {
  // Each used to pass the guard, then leave vscode-jsonrpc's reader waiting for a terminator it never saw (a stray
  // CR, LF-only framing) or reading a second Content-Length of the host's choosing (0x8D 0x8A is CR LF to its
  // ASCII decoding): a silent stream. Refused whole or byte by byte, after the whole frames before it.
  const cases: Array<[string, Buffer, string]> = [
    ['a stray CR', Buffer.from('Content-Length: 2\r\r\n\r\n{}'), 'fatal a bare CR (\\r) in the header block'],
    ['LF framing', Buffer.from('Content-Length: 2\n\n{}'), 'fatal a header line ended by a bare LF (\\n), not CRLF'],
    ['a high-bit byte', Buffer.concat([Buffer.from('Content-Length: 2\r\nX-Pad: a'), Buffer.from([0x8d, 0x8a]), Buffer.from('Content-Length: 99\r\n\r\n{}')]), 'fatal a header byte outside ASCII'],
  ];
  for (const [name, bytes, fatal] of cases) {
    const whole = guarded();
    await whole.feed([Buffer.concat([frame('{"a":1}'), bytes, frame('{"b":2}')])]);
    assert.deepEqual(whole.events, [fatal], name);
    assert.equal(whole.text(), frame('{"a":1}').toString(), name);
    const split = guarded();
    await split.feed([...Buffer.concat([frame('{"a":1}'), bytes])].map((b) => Buffer.from([b])));
    assert.deepEqual(split.events, [fatal], `${name}, byte by byte`);
    assert.equal(split.text(), frame('{"a":1}').toString(), `${name}, byte by byte`);
  }
});
