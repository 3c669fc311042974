/**
 * The approval route's body is capped at 16 KiB (a decision is a digest and
 * at most 2000 characters of reason). A longer one — declared by its
 * Content-Length or streamed chunked past the cap — is 413 Payload Too Large
 * with the routes' JSON error naming the cap, as `/mcp` answers a body over
 * its cap 413; a short body that is no decision stays 400.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';

const CAP = 16 * 1024;

test('an approval body over its 16 KiB cap is 413 with a JSON error, declared or streamed', async () => {
  const host = await startInProcess({ transport: 'ws' });
  const token = await mintBearer('mia');
  const url = `http://127.0.0.1:${host.port}/threads/t/calls/c/approval`;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const oversize = JSON.stringify({ decision: 'deny', args_sha256: 'a'.repeat(64), reason: 'x'.repeat(CAP) });
  try {
    const declared = await fetch(url, { method: 'POST', headers, body: oversize });
    // Chunked, no Content-Length: the cap is found while the body streams.
    const chunks = [oversize.slice(0, 8000), oversize.slice(8000)];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(next));
      },
    });
    const streamed = await fetch(url, { method: 'POST', headers, body: stream, duplex: 'half' } as RequestInit);
    for (const [how, res] of [['declared', declared], ['streamed', streamed]] as const) {
      assert.equal(res.status, 413, how);
      assert.match(res.headers.get('content-type') ?? '', /application\/json/, how);
      const body = (await res.json()) as { error?: unknown };
      assert.equal(typeof body.error, 'string', how);
      assert.match(body.error as string, /16384 bytes/, how);
    }
    // A short body that is no decision is still 400.
    assert.equal((await fetch(url, { method: 'POST', headers, body: '{"decision":"maybe"}' })).status, 400);
  } finally {
    await host.stop();
  }
});
