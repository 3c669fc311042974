/**
 * Fuzz: JSON-RPC envelopes and LSP framing on stdio. Random bodies, random
 * envelopes (methods real and not, ids of every type, params of any shape,
 * secrets pasted in), invalid JSON and oversized frames, with a probe request
 * every few frames, bursts of `id: null` requests past the read window's
 * size. The daemon must answer every probe, every answer must be
 * structured and never -32603, and no secret may reach stdout, stderr or a
 * database file. A second part breaks the header on purpose, in fresh
 * daemons: each must exit non-zero with a log line, never hang.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { METHODS } from '../../src/rpc/dispatcher.js';
import { frameOf, startRaw } from '../helpers/raw-stdio.js';
import { TEST_BEARER_SECRET, mintBearer } from '../helpers/tokens.js';
import { splitVariants } from '../helpers/split-tokens.js';
import { Rng, SEED, randomJson, randomString, withSeed } from './prng.js';
import { assertCleanStderr, assertNoSecret, assertNoSecretInDbFiles, assertStructured, tokenMarks } from './invariants.js';
import { slowSuite } from '../helpers/quick.js';

const FRAMES = 400;
const MAX_BYTES = 4096;
const methods = Object.keys(METHODS).filter((m) => m !== 'shutdown');

test(`stdio: ${FRAMES} random frames, every probe answered, nothing internal, no secret out (seed ${SEED})`, slowSuite({ timeout: 120_000 }), () =>
  withSeed('stdio envelopes', async () => {
    const rng = new Rng(SEED);
    const token = await mintBearer('fuzz-user');
    const marks = tokenMarks(token);
    const d = startRaw(['--executor', 'inprocess', '--max-message-bytes', String(MAX_BYTES)]);
    try {
      d.frame({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocol_version: '1' } });
      d.frame({ jsonrpc: '2.0', id: 'open', method: 'session/open', params: { auth: { type: 'bearer', token } } });
      const opened = await d.waitFor((m) => m.id === 'open');
      const sessionId = (opened?.result as { session_id: string }).session_id;
      assert.ok(sessionId);
      // Whole, glued, and split or padded the ways that once got past the scan (contract section 7).
      const secretText = () => rng.pick([`x${token}`, `auth_${token}`, `key ${TEST_BEARER_SECRET}!`, token, ...Object.values(splitVariants(token))]);

      let probes = 0;
      for (let i = 0; i < FRAMES; i++) {
        const r = rng.fork(i);
        const kind = r.int(10);
        if (kind === 0) d.send(frameOf(JSON.stringify(randomJson(r))));
        else if (kind === 1) d.send(frameOf(randomString(r, 200)));
        else if (kind === 3 && r.bool(0.3)) {
          // A burst of `id: null` requests: each answered -32600, none holds a slot of the read window.
          for (let j = 0; j < 60; j++) d.frame({ jsonrpc: '2.0', id: null, method: r.pick(methods), params: { session_id: sessionId } });
        } else if (kind === 2) {
          // Declared over the cap: discarded as it streams; nothing inside it runs.
          const n = MAX_BYTES + 1 + r.int(3 * MAX_BYTES);
          const body = Buffer.alloc(n, 0x20);
          frameOf({ jsonrpc: '2.0', id: `hidden-${i}`, method: 'thread/list', params: { session_id: sessionId } }).copy(body, 0);
          d.send(Buffer.concat([Buffer.from(`Content-Length: ${n}\r\n\r\n`), body]));
        } else {
          const id = r.pick<unknown>([`f-${i}`, i, null, undefined, {}, [i], true, 1.5, -0]);
          const params = r.bool(0.3) ? randomJson(r) : { ...(randomJson(r) as object), session_id: r.bool(0.8) ? sessionId : randomString(r) };
          if (r.bool(0.15) && params && typeof params === 'object') {
            (params as Record<string, unknown>)[r.pick(['content', 'thread_id', 'title', 'args'])] =
              r.bool() ? secretText() : { module: 'memory', method: 'update', input: { key: 'k', content: secretText() } };
          }
          const envelope: Record<string, unknown> = { jsonrpc: r.bool(0.95) ? '2.0' : r.pick(['1.0', 2, null]), method: r.bool(0.85) ? r.pick(methods) : r.pick([randomString(r), 5, null, secretText()]) };
          if (id !== undefined) envelope.id = id;
          if (!r.bool(0.1)) envelope.params = params;
          d.send(frameOf(JSON.stringify(envelope)));
        }
        if (i % 20 === 19) {
          const probe = `probe-${++probes}`;
          d.frame({ jsonrpc: '2.0', id: probe, method: 'thread/list', params: { session_id: sessionId } });
          const answer = await d.waitFor((m) => m.id === probe, 30_000);
          assert.ok(answer && 'result' in answer, `probe ${probe} answered (${d.stderr().slice(-500)})`);
        }
      }
      assert.equal(d.proc.exitCode, null, 'still running');
      for (const m of d.messages) assertStructured(m, 'stdio answer');
      assert.ok(!d.messages.some((m) => typeof m.id === 'string' && m.id.startsWith('hidden-')), 'oversized bodies never ran');
      assertNoSecret(JSON.stringify(d.messages), marks, 'stdout');
      // While the daemon runs, its -wal and -shm exist: scan them too.
      const files = assertNoSecretInDbFiles(d.dataDir, marks);
      assert.ok(files.some((f) => f.endsWith('-wal')), `the WAL was scanned (${files.join(', ')})`);
      d.proc.stdin.end();
      assert.equal(await d.exited, 0);
      assertNoSecretInDbFiles(d.dataDir, marks);
      assertCleanStderr(d.stderr(), marks);
    } finally {
      d.kill();
    }
  }),
);

test(`stdio: broken headers end the daemon loudly, never silently (seed ${SEED})`, slowSuite({ timeout: 120_000 }), () =>
  withSeed('stdio headers', async () => {
    const rng = new Rng(SEED ^ 0x5eed);
    const broken = [
      () => `Content-Length: -${1 + rng.int(100)}\r\n\r\n`,
      () => `Content-Length: ${randomString(rng, 8).replace(/[\r\n]/g, '') || 'x'}z\r\n\r\n{}`,
      () => `${randomString(rng, 20).replace(/[:\r\n]/g, '') || 'X'}\r\n\r\n{}`,
      () => `Content-Length: 3\r\n${'a'.repeat(9000)}`,
      () => `Content-Length: 1e3\r\n\r\n{}`,
    ];
    for (let i = 0; i < 3; i++) {
      const raw = rng.pick(broken)();
      const d = startRaw();
      try {
        d.frame({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocol_version: '1' } });
        assert.ok(await d.waitFor((m) => m.id === 'init'));
        d.send(raw);
        const code = await Promise.race([d.exited, new Promise<string>((r) => setTimeout(() => r('hang'), 20_000).unref())]);
        assert.notEqual(code, 'hang', `no silent stream after ${JSON.stringify(raw.slice(0, 80))}`);
        assert.notEqual(code, 0);
        assert.match(d.stderr(), /stdio framing broken/);
        assertCleanStderr(d.stderr(), []);
      } finally {
        d.kill();
      }
    }
  }),
);
