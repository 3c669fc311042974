/**
 * A daemon keeps an idle keep-alive connection open longer than a load
 * balancer keeps its pooled connections idle (src/http/http-server.ts): a
 * daemon that closed it first would drop the request a balancer sends on it
 * as it closes. Read from outside, where a balancer reads it: the
 * `Keep-Alive` header of a response over a real socket.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess } from '../../helpers/in-process.js';
import { KEEP_ALIVE_TIMEOUT_MS } from '../../../src/http/http-server.js';

test('an idle keep-alive connection outlives a balancer’s 60 s pool (Keep-Alive: timeout=65)', async () => {
  const host = await startInProcess({ transport: 'ws' });
  try {
    const res = await fetch(`http://127.0.0.1:${host.port}/readyz`, { headers: { connection: 'keep-alive' } });
    await res.text();
    assert.equal(res.status, 200);
    const timeout = Number(/timeout=(\d+)/.exec(res.headers.get('keep-alive') ?? '')?.[1]);
    assert.equal(timeout * 1000, KEEP_ALIVE_TIMEOUT_MS, `Keep-Alive: ${res.headers.get('keep-alive')}`);
    assert.ok(timeout > 60, 'longer than nginx’s default upstream keepalive_timeout (60 s)');
  } finally {
    await host.stop();
  }
});
