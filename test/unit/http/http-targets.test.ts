/**
 * Any HTTP request target — `//`, `http://[::1/`, absolute-form, `*`,
 * garbage — gets an answer below 500 from every route (inspector files,
 * AG-UI streams), never a stack in the log; the server answers on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startInProcess } from '../../helpers/in-process.js';

/** One raw request; resolves with the status code (0 when the server closed without one). */
export function rawStatus(port: number, requestLine: string, headers = 'Host: 127.0.0.1\r\n'): Promise<number> {
  return new Promise((resolve) => {
    let data = '';
    const sock = connect(port, '127.0.0.1', () => sock.write(`${requestLine}\r\n${headers}Connection: close\r\n\r\n`));
    sock.setEncoding('latin1');
    sock.on('data', (c: string) => (data += c));
    const done = () => resolve(Number(/^HTTP\/1\.[01] (\d{3})/.exec(data)?.[1] ?? 0));
    sock.on('close', done);
    sock.on('error', done);
    setTimeout(() => sock.destroy(), 5000).unref();
  });
}

test('odd request targets get a 4xx, never a 500 or a logged stack', async () => {
  const host = await startInProcess({ executor: 'subprocess', transport: 'ws' });
  try {
    const targets = [
      '//', '///', '//evil.example/x', 'http://[::1/', 'http://[::1]:x/', 'http://', '*', 'garbage', '%', '/%zz', '/threads/%zz/events',
      '/threads//events', '/threads/x/events?replay=%', 'http://localhost/threads/x/events', 'https://a b/', '/\\\\', '/..%2f..%2fetc',
    ];
    for (const t of targets) {
      for (const method of ['GET', 'HEAD', 'POST']) {
        const status = await rawStatus(host.port!, `${method} ${t} HTTP/1.1`);
        assert.ok(status >= 400 && status < 500, `${method} ${t} → ${status}`);
      }
    }
    assert.equal(await rawStatus(host.port!, 'GET http://127.0.0.1/ HTTP/1.1'), 200, 'absolute-form is read as its path');
    assert.equal(await rawStatus(host.port!, 'GET / HTTP/1.1'), 200, 'still serving');
    assert.doesNotMatch(host.stderr(), /http handler failed|ag-ui stream failed|"level":"error"/);
  } finally {
    await host.stop();
  }
});
