/**
 * The bench's PostgreSQL section (bench/report-pg.ts; its proxy is test/helpers/pg-wire-proxy.ts):
 * a PostgreSQL-only run replaces its own section of RESULTS.md and nothing
 * else, and the counting proxy counts one round trip per Sync or simple Query,
 * telling an ignored statement's apart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type AddressInfo } from 'node:net';
import { PG_BEGIN, PG_END, readRoundTrips, replacePgSection } from '../../../bench/report-pg.js';
import { startPgWireProxy } from '../../helpers/pg-wire-proxy.js';
import { waitFor } from '../../helpers/wait-for.js';

test('a PostgreSQL-only run replaces its marked section and keeps the others', () => {
  const file = ['# r', '## Side by side', 'side figures', PG_BEGIN, '## PostgreSQL: one daemon, two daemons on one database', 'old', PG_END, '## (f) history', 'h'].join('\n');
  const out = replacePgSection(file, `${PG_BEGIN}\nnew\n${PG_END}`)!;
  assert.equal(out, ['# r', '## Side by side', 'side figures', PG_BEGIN, 'new', PG_END, '## (f) history', 'h'].join('\n'));
});

test('a file written before the markers gets its old PostgreSQL section replaced up to the next heading', () => {
  const file = ['## Side by side', 's', '## PostgreSQL: one daemon, two daemons on one database', 'old', '', '## (f) history', 'h'].join('\n');
  const out = replacePgSection(file, 'NEW')!;
  assert.equal(out, ['## Side by side', 's', 'NEW', '', '## (f) history', 'h'].join('\n'));
  assert.equal(replacePgSection('## nothing here', 'NEW'), undefined);
});

test('the round-trip history is read back from its hidden line', () => {
  const h = readRoundTrips('x\n<!-- pg-round-trips: {"now":{"perCall":2,"commit":"abc"},"before":{"perCall":12,"commit":"def"}} -->\n');
  assert.deepEqual(h, { now: { perCall: 2, commit: 'abc' }, before: { perCall: 12, commit: 'def' } });
});

/** A PostgreSQL message: type byte, int32 length (itself included), body. */
const msg = (type: string, body = Buffer.alloc(0)) => {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(4 + body.length, 1);
  return Buffer.concat([head, body]);
};

test('the counting proxy counts Sync and Query messages, not the start-up or other messages, and tells ignored statements apart', async () => {
  const received: Buffer[] = [];
  const server = createServer((socket) => socket.on('data', (c: Buffer) => received.push(c)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy = await startPgWireProxy(`postgres://u:p@127.0.0.1:${(server.address() as AddressInfo).port}/db`, { ignore: (text) => text === 'NOTIFY x' });
  const url = new URL(proxy.url);
  const client = connect(Number(url.port), url.hostname);
  try {
    proxy.reset();
    const startup = Buffer.alloc(8);
    startup.writeInt32BE(8, 0);
    startup.writeInt32BE(196608, 4); // protocol 3.0, no parameters
    const stream = Buffer.concat([
      startup,
      // A named statement parsed and run, then run again by its name alone (Bind names it); an ignored one.
      msg('P', Buffer.from('n1\0SELECT 1\0')), msg('B', Buffer.from('\0n1\0')), msg('E'), msg('S'),
      msg('B', Buffer.from('\0n1\0')), msg('E'), msg('S'),
      msg('P', Buffer.from('n2\0NOTIFY x\0')), msg('B', Buffer.from('\0n2\0')), msg('E'), msg('S'),
      msg('Q', Buffer.from('BEGIN\0')), msg('B', Buffer.from('\0n2\0')), msg('S'),
    ]);
    // Split across writes in the middle of a header: the counter must reassemble.
    client.write(stream.subarray(0, 11));
    client.write(stream.subarray(11));
    await waitFor(() => Buffer.concat(received).length === stream.length || undefined, 'the proxy to forward every byte');
    assert.equal(proxy.roundTrips(), 3);
    assert.equal(proxy.ignored(), 2);
    assert.deepEqual(proxy.statements(), ['SELECT 1', 'SELECT 1', 'BEGIN']);
  } finally {
    client.destroy();
    await proxy.stop();
    server.close();
  }
});
