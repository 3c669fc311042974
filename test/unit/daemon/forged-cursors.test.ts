/**
 * A page cursor the daemon did not return is -32602 INVALID_CURSOR
 * (methods.md): also one that is well-formed base64url JSON of the right
 * arity but holds no position the store writes — a timestamp that is not
 * `toISOString()`'s, an id no request could carry. Such a cursor used to
 * page from wherever it sorted. A cursor the daemon returned still pages.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess, type InProcessHost } from '../../helpers/in-process.js';
import { openSession, rpcError } from '../../helpers/host.js';
import { mintBearer } from '../../helpers/tokens.js';
import type { CallListResult, ThreadListResult } from '../../../src/protocol/index.js';

const cursorOf = (position: unknown) => Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
const TIME = '2026-12-06T21:00:00.000Z';

describe('forged page cursors', () => {
  let host: InProcessHost;
  let session: string;
  before(async () => {
    host = await startInProcess();
    session = (await openSession(host, await mintBearer('fay'))).session_id;
    for (const thread_id of ['a', 'b', 'c']) await host.request('message/append', { session_id: session, thread_id, role: 'user', content: 'hi' });
  });
  after(() => host.stop());

  const refused = async (method: string, cursor: string, label: string) => {
    const err = await rpcError(host.request(method, { session_id: session, cursor }));
    assert.deepEqual([err.code, err.data], [-32602, { code: 'INVALID_CURSOR' }], `${method} ${label}`);
  };

  test('thread/list: a position the store never writes is INVALID_CURSOR; a returned one pages', async () => {
    const forged: Array<[string, unknown]> = [
      ['not a date', ['not a date', 'x']],
      ['a date without milliseconds', ['2026-12-06T21:00:00Z', 'x']],
      ['a date with an offset', ['2026-12-06T21:00:00.000+00:00', 'x']],
      ['an impossible date', ['2026-02-30T21:00:00.000Z', 'x']],
      ['an empty time', ['', 'x']],
      ['a number for the id', [TIME, 5]],
      ['an empty id', [TIME, '']],
      ['an id too long', [TIME, 'x'.repeat(201)]],
      ['three parts', [TIME, 'x', 'y']],
      ['an object', { updated_at: TIME, thread_id: 'x' }],
    ];
    for (const [label, position] of forged) await refused('thread/list', cursorOf(position), label);

    const first = await host.request<ThreadListResult>('thread/list', { session_id: session, limit: 2 });
    assert.ok(first.next_cursor);
    const next = await host.request<ThreadListResult>('thread/list', { session_id: session, limit: 2, cursor: first.next_cursor });
    assert.deepEqual(next.threads.map((t) => t.thread_id), ['a']);
  });

  test('call/list: a position the store never writes is INVALID_CURSOR; a well-formed one pages', async () => {
    const forged: Array<[string, unknown]> = [
      ['not a date', ['not a date', 't', 'c']],
      ['a date without milliseconds', ['2026-12-06T21:00:00Z', 't', 'c']],
      ['an impossible date', ['2026-13-01T00:00:00.000Z', 't', 'c']],
      ['an empty thread id', [TIME, '', 'c']],
      ['an empty call id', [TIME, 't', '']],
      ['a call id too long', [TIME, 't', 'c'.repeat(201)]],
    ];
    for (const [label, position] of forged) await refused('call/list', cursorOf(position), label);
    assert.deepEqual(await host.request<CallListResult>('call/list', { session_id: session, cursor: cursorOf([TIME, 't', 'c']) }), { calls: [], next_cursor: null });
  });
});
