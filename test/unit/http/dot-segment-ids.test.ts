/**
 * Thread and call ids are any text of 1–200 characters, `.` and `..` among
 * them. In a path they are dot segments, which URL parsing removes
 * (`/threads/../events` → `/events`, and `%2E%2E` counts as `..` too), so the
 * AG-UI stream and the call routes of such a thread answered 404 (or another
 * route) for a thread the user owns. The id segments of these routes are
 * read from the target as sent, then percent-decoded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { openSession } from '../../helpers/host.js';
import { startInProcess } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';

/** One raw GET (the target exactly as given); the status and the first bytes of the body. */
function rawGet(port: number, target: string, token: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    let data = '';
    const sock = connect(port, '127.0.0.1', () => sock.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`));
    sock.setEncoding('latin1');
    sock.on('data', (c: string) => {
      data += c;
      // An event stream stays open: its head and first run are the answer.
      if (/RUN_FINISHED/.test(data)) sock.destroy();
    });
    const done = () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0), text: data });
    sock.on('close', done);
    sock.on('error', done);
    setTimeout(() => sock.destroy(), 5000).unref();
  });
}

test('threads and calls whose ids are "." or ".." are reached by their routes', async () => {
  const host = await startInProcess({ transport: 'ws' });
  const token = await mintBearer('dots');
  try {
    const { session_id } = await openSession(host, token);
    for (const id of ['.', '..']) {
      await host.request('tool/invoke', { session_id, thread_id: id, tool_call_id: id, args: { module: 'memory', method: 'read', input: {} } });
    }
    for (const [target, id] of [
      ['/threads/../calls/..', '..'],
      ['/threads/%2E%2E/calls/%2e%2e', '..'],
      ['/threads/./calls/.', '.'],
      ['/threads/%2e/calls/%2E', '.'],
    ] as const) {
      const got = await rawGet(host.port!, target, token);
      assert.equal(got.status, 200, `${target}: ${got.text.slice(0, 200)}`);
      const body = JSON.parse(got.text.slice(got.text.indexOf('\r\n\r\n') + 4).replace(/^[0-9a-f]+\r\n/, '').replace(/\r\n0\r\n\r\n$/, '')) as { thread_id: string; tool_call_id: string };
      assert.deepEqual([body.thread_id, body.tool_call_id], [id, id]);
    }
    for (const target of ['/threads/../events', '/threads/%2E%2E/events', '/threads/./events', '/threads/%2e/events']) {
      const got = await rawGet(host.port!, target, token);
      assert.equal(got.status, 200, `${target}: ${got.text.slice(0, 200)}`);
      assert.match(got.text, /text\/event-stream/);
      assert.match(got.text, /TOOL_CALL_RESULT/);
    }
    // Another segment shape is still no route.
    assert.equal((await rawGet(host.port!, '/threads/x/../events', token)).status, 404);
  } finally {
    await host.stop();
  }
});
