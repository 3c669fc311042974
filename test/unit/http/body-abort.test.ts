/**
 * A client that drops its connection part way through a request body (the
 * approval route's decision, an `/mcp` POST) has done nothing the daemon
 * got wrong: the daemon logs it at `info`, naming what happened, without a
 * stack — not as an `error` of the route.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startInProcess } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';
import { waitFor } from '../../helpers/wait-for.js';

/** Sends a POST's head and part of its body (Content-Length promises more), then destroys the socket. */
function abortUpload(port: number, target: string, token: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1', () => {
      const head = `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n`;
      sock.write(`${head}{"decision":"approve",`, () => sock.destroy());
    });
    sock.on('close', () => resolve());
    sock.on('error', reject);
  });
}

type Line = { level: string; msg: string; [k: string]: unknown };
const lines = (text: string): Line[] => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line);

for (const [route, target] of [
  ['the approval route', '/threads/t1/calls/c1/approval'],
  ['/mcp', '/mcp'],
] as const) {
  test(`an upload the client aborts on ${route} is logged at info, named, without a stack`, async () => {
    const host = await startInProcess({ transport: 'ws' });
    try {
      const before = lines(host.stderr()).length;
      await abortUpload(host.port!, target, await mintBearer('mia'));
      const line = await waitFor(
        () => lines(host.stderr()).slice(before).find((l) => /abort|route failed|handler failed/.test(l.msg)),
        () => `a log line about the aborted upload; saw ${host.stderr()}`,
      );
      assert.ok(line.level === 'info' || line.level === 'warn', JSON.stringify(line));
      assert.match(line.msg, /abort/, JSON.stringify(line));
      assert.doesNotMatch(JSON.stringify(line), /\\n\s+at |stack/, 'no stack');
      assert.ok(!lines(host.stderr()).slice(before).some((l) => l.level === 'error'), host.stderr());
    } finally {
      await host.stop();
    }
  });
}
