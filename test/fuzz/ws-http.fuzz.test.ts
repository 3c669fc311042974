/**
 * Fuzz: WebSocket frames on /rpc and HTTP request targets on the same
 * server. Random text frames (JSON values, envelopes, invalid JSON), binary
 * frames, frames over the cap and bursts of `id: null` requests past the
 * read window, with a probe every few frames; random
 * request targets and methods over raw TCP. Invariants: every WebSocket
 * answer structured and never -32603, every probe answered, every HTTP
 * status below 500, the server still serving, no secret anywhere.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import WebSocket from 'ws';
import { METHODS } from '../../src/rpc/dispatcher.js';
import { startHost } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import { splitVariants } from '../helpers/split-tokens.js';
import { Rng, SEED, randomJson, randomString, withSeed } from './prng.js';
import { assertCleanStderr, assertNoSecret, assertNoSecretInDbFiles, assertStructured, type RpcAnswer, tokenMarks } from './invariants.js';
import { slowSuite } from '../helpers/quick.js';

const FRAMES = 300;
const TARGETS = 150;
const MAX_BYTES = 4096;
const methods = Object.keys(METHODS).filter((m) => m !== 'shutdown');

function rawStatus(port: number, request: Buffer | string): Promise<number> {
  return new Promise((resolve) => {
    let data = '';
    const sock = connect(port, '127.0.0.1', () => sock.write(request));
    sock.setEncoding('latin1');
    sock.on('data', (c: string) => {
      data += c;
      if (/^HTTP\/1\.[01] \d{3}/.test(data)) sock.destroy();
    });
    const done = () => resolve(Number(/^HTTP\/1\.[01] (\d{3})/.exec(data)?.[1] ?? 0));
    sock.on('close', done);
    sock.on('error', done);
    setTimeout(() => sock.destroy(), 5000).unref();
  });
}

test(`ws frames and http targets: structured answers, no 5xx, no secret out (seed ${SEED})`, slowSuite({ timeout: 150_000 }), () =>
  withSeed('ws frames / http targets', async () => {
    const rng = new Rng(SEED ^ 0x3e7);
    const r0 = rng.fork(-1);
    const token = await mintBearer('fuzz-ws');
    const marks = tokenMarks(token);
    const secretText = () => r0.pick([`x${token}`, token, ...Object.values(splitVariants(token))]);
    const host = await startHost({ transport: 'ws', args: ['--executor', 'inprocess', '--max-message-bytes', String(MAX_BYTES)] });
    try {
      const ws = new WebSocket(`ws://127.0.0.1:${host.port}/rpc`);
      await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
      const answers: RpcAnswer[] = [];
      const waiters = new Set<() => void>();
      ws.on('message', (d) => {
        answers.push(JSON.parse(d.toString()) as RpcAnswer);
        for (const w of waiters) w();
      });
      const waitFor = (id: string) =>
        new Promise<RpcAnswer | undefined>((resolve) => {
          const check = () => {
            const a = answers.find((x) => x.id === id);
            if (a) {
              waiters.delete(check);
              clearTimeout(timer);
              resolve(a);
            }
          };
          const timer = setTimeout(() => (waiters.delete(check), resolve(undefined)), 30_000);
          waiters.add(check);
          check();
        });
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocol_version: '1' } }));
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'open', method: 'session/open', params: { auth: { type: 'bearer', token } } }));
      const sessionId = ((await waitFor('open'))?.result as { session_id: string }).session_id;
      assert.ok(sessionId);

      for (let i = 0; i < FRAMES; i++) {
        const r = rng.fork(i);
        const kind = r.int(10);
        if (kind === 0) ws.send(JSON.stringify(randomJson(r)));
        else if (kind === 1) ws.send(randomString(r, 200));
        else if (kind === 2) ws.send(Buffer.from(randomString(r, 50)), { binary: true });
        else if (kind === 3) ws.send(`{"jsonrpc":"2.0","id":"big-${i}","method":"thread/list","params":{"session_id":"${sessionId}","x":"${'a'.repeat(MAX_BYTES)}"}}`);
        else if (kind === 4) ws.send(Buffer.from([0xff, 0xfe, 0x7b, 0x22]));
        else if (kind === 5 && r.bool(0.3)) {
          // A burst of `id: null` requests: each answered -32600, none holds a slot of the read window.
          for (let j = 0; j < 100; j++) ws.send(JSON.stringify({ jsonrpc: '2.0', id: null, method: r.pick(methods), params: { session_id: sessionId } }));
        } else {
          const params = r.bool(0.3) ? randomJson(r) : { ...(randomJson(r) as object), session_id: r.bool(0.8) ? sessionId : randomString(r) };
          if (r.bool(0.15) && params && typeof params === 'object') (params as Record<string, unknown>).content = secretText();
          const envelope: Record<string, unknown> = { jsonrpc: '2.0', method: r.bool(0.9) ? r.pick(methods) : r.pick([randomString(r), 7, secretText()]), params };
          const id = r.pick<unknown>([`f-${i}`, i, null, undefined, {}, [1], false]);
          if (id !== undefined) envelope.id = id;
          ws.send(JSON.stringify(envelope));
        }
        if (i % 20 === 19) {
          ws.send(JSON.stringify({ jsonrpc: '2.0', id: `probe-${i}`, method: 'thread/list', params: { session_id: sessionId } }));
          const a = await waitFor(`probe-${i}`);
          assert.ok(a && 'result' in a, `probe ${i} answered`);
        }
      }
      for (const a of answers) assertStructured(a, 'ws answer');
      assertNoSecret(JSON.stringify(answers), marks, 'ws answers');
      ws.close();

      const verbs = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'BREW', 'G\u0000T'];
      const pieces = ['/', '//', '/threads/', 'events', '%', '%zz', '?', '#', '[', ']', '::1', 'http://', 'https://[', '@', '..', '\\', ' ', '*', 'mcp', 'rpc', 'index.html', '%2f'];
      for (let i = 0; i < TARGETS; i++) {
        const r = rng.fork(10_000 + i);
        let target = '';
        for (let k = 0, n = 1 + r.int(6); k < n; k++) target += r.bool(0.8) ? r.pick(pieces) : randomString(r, 8).replace(/[\r\n ]/g, '');
        const headers = r.bool(0.3) ? `Authorization: Bearer ${r.bool() ? token : randomString(r, 20)}\r\n` : '';
        const status = await rawStatus(host.port!, `${r.pick(verbs)} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Connection: close\r\n\r\n`);
        assert.ok(status > 0 && status < 500, `HTTP ${JSON.stringify(target)} → ${status}`);
      }
      assert.equal(await rawStatus(host.port!, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'), 200, 'still serving');
      assertNoSecretInDbFiles(host.dataDir, marks);
    } finally {
      await host.stop();
    }
    assertNoSecretInDbFiles(host.dataDir, marks);
    assertCleanStderr(host.stderr().split('\n').filter((l) => !l.startsWith('{"listening"')).join('\n'), marks);
  }),
);
