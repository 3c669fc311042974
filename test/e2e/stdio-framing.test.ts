/**
 * Contract section 13 on stdio: a frame over `limits.max_message_bytes` is
 * answered -32600 (`id: null`) at once and its body discarded as it streams;
 * valid JSON that is not a JSON-RPC message is -32600 too; a header that
 * cannot be parsed ends the daemon with a clear log line and a non-zero exit
 * — never a silent stream.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { frameOf, startRaw, startRawInProcess } from '../helpers/raw-stdio.js';
import { mintBearer } from '../helpers/tokens.js';

const init = { jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocol_version: '1' } };
const probe = (id: string) => ({ jsonrpc: '2.0', id, method: 'thread/list', params: { session_id: 'nope' } });

function peakRssKb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

test('an oversized frame is answered -32600 at once, its body is never buffered, and the daemon goes on', { timeout: 60_000 }, async () => {
  const d = startRaw(['--max-message-bytes', '65536']);
  try {
    d.frame(init);
    assert.ok(await d.waitFor((m) => m.id === 'init' && 'result' in m));
    const before = peakRssKb(d.proc.pid!);
    const size = 128 * 1024 * 1024;
    d.send(`Content-Length: ${size}\r\n\r\n`);
    const refused = await d.waitFor((m) => m.id === null && m.error?.code === -32600);
    assert.ok(refused, 'answered before the body arrives');
    assert.match(refused!.error!.message, /too large/);
    // Stream the body with a valid request's bytes inside it: all of it is discarded.
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    frameOf(probe('hidden')).copy(chunk, 100);
    for (let sent = 0; sent < size; sent += chunk.length) {
      if (!d.proc.stdin.write(chunk)) await new Promise((r) => d.proc.stdin.once('drain', r));
    }
    d.frame(probe('after'));
    const after = await d.waitFor((m) => m.id === 'after');
    assert.equal(after?.error?.code, -32001, 'the next message is answered');
    assert.ok(!d.messages.some((m) => m.id === 'hidden'), 'nothing inside the discarded body ran');
    const grownMb = (peakRssKb(d.proc.pid!) - before) / 1024;
    assert.ok(grownMb < 64, `a 128 MiB body was not buffered (peak RSS grew ${grownMb.toFixed(1)} MiB)`);
    assert.equal(d.proc.exitCode, null);
  } finally {
    d.kill();
  }
});

test('valid JSON that is not a JSON-RPC request gets -32600 with id null; invalid JSON gets -32700; the daemon answers on', async () => {
  const d = startRaw();
  try {
    d.frame(init);
    const bodies: Array<[string, number]> = [
      ['[]', -32600],
      [JSON.stringify([probe('in-batch')]), -32600],
      ['null', -32600],
      ['42', -32600],
      [JSON.stringify({ jsonrpc: '2.0', id: {}, method: 'thread/list', params: {} }), -32600],
      [JSON.stringify({ jsonrpc: '2.0', id: [1], method: 'thread/list', params: {} }), -32600],
      [JSON.stringify({ jsonrpc: '2.0', id: true, method: 'thread/list', params: {} }), -32600],
      [JSON.stringify({ jsonrpc: '2.0', id: 7, method: 5 }), -32600],
      [JSON.stringify({ id: 8, method: 'thread/list' }), -32600],
      ['{not json', -32700],
      ['', -32700],
    ];
    for (const [body] of bodies) d.send(frameOf(body));
    d.frame(probe('after'));
    assert.equal((await d.waitFor((m) => m.id === 'after'))?.error?.code, -32001);
    const errors = d.messages.filter((m) => m.id === null).map((m) => m.error?.code);
    assert.deepEqual(errors, bodies.map(([, code]) => code));
    assert.ok(!d.messages.some((m) => m.id === 'in-batch' || m.id === 7 || m.id === 8));
    // A body that is not UTF-8 (a stray 0xFF, a surrogate's bytes ED A0 80) is refused as WebSocket refuses such a
    // frame, never decoded to U+FFFD and run (contract section 21: stored as written, or refused).
    for (const bad of [Buffer.from([0xff]), Buffer.from([0xed, 0xa0, 0x80])]) {
      const body = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"bad-utf8","method":"thread/list","params":{"session_id":"a'), bad, Buffer.from('"}}')]);
      d.send(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
      d.frame(probe('after-utf8'));
      const next = await d.waitFor((m) => m.id === 'after-utf8');
      assert.equal(next?.error?.code, -32001, 'the daemon answers on');
      const refusal = d.messages.filter((m) => m.id === null).at(-1);
      assert.deepEqual([refusal?.error?.code, refusal?.error?.message], [-32700, 'parse error: the body is not UTF-8']);
      assert.ok(!d.messages.some((m) => m.id === 'bad-utf8'), 'the request never ran');
      d.messages.splice(0, d.messages.length);
    }
  } finally {
    d.kill();
  }
});

for (const [name, raw] of [
  ['a negative Content-Length', 'Content-Length: -5\r\n\r\n{}'],
  ['a non-numeric Content-Length', 'Content-Length: abc\r\n\r\n{}'],
  ['no Content-Length at all', 'Content-Type: application/json\r\n\r\n{}'],
  ['a header line without a colon', 'Content-Length 10\r\n\r\n{}'],
  ['a header block without terminator', `Content-Length: 10\r\n${'X-Pad: y\r\n'.repeat(1000)}`],
  ['a length shorter than the body', `Content-Length: 5\r\n\r\n${JSON.stringify(probe('short'))}Content-Length: 2\r\n\r\n{}`],
  ['stdin ending inside a body', 'Content-Length: 100\r\n\r\n{"jsonrpc"'],
] as const) {
  test(`${name} ends the daemon with a clear log line and a non-zero exit`, async () => {
    // The binary for the end of input; the others on a connection to the daemon in this process, whose end code
    // is the binary's exit code: the reader and its refusal are the same code.
    const d = name.startsWith('stdin ending') ? startRaw() : await startRawInProcess();
    try {
      d.frame(init);
      assert.ok(await d.waitFor((m) => m.id === 'init'));
      d.send(raw);
      if (name.startsWith('stdin ending')) d.proc.stdin.end();
      const code = await Promise.race([d.exited, new Promise<string>((r) => setTimeout(() => r('still running'), 15_000).unref())]);
      assert.notEqual(code, 'still running', `no silent hang: ${d.stderr()}`);
      assert.notEqual(code, 0);
      assert.match(d.stderr(), /stdio framing broken/);
    } finally {
      d.kill();
    }
  });
}

// Contract section 2: on stdin's end "in-flight calls finish"; transports.md: a broken header ends the daemon
// with code 1, "in-flight calls finish first". vscode-jsonrpc decodes the frames of a read one per tick and
// dispatches one message per tick: a host that writes its requests and closes stdin at once (or writes a bad
// header right behind whole frames, in the same write) used to get no answer at all.
for (const [name, tail, exitCode, logged] of [
  ['stdin ending right behind whole frames', '', 0, undefined],
  ['a broken header right behind whole frames', 'Content-Length: -1\r\n\r\n', 1, /stdio framing broken/],
  ['a JSON line right behind whole frames', '{"jsonrpc":"2.0","id":9,"method":"thread/list"}\n', 2, /stdio expects LSP framing/],
] as const) {
  test(`${name}: every request read before it is answered, then the daemon exits ${exitCode}`, async () => {
    const d = startRaw();
    try {
      const open = { jsonrpc: '2.0', id: 'open', method: 'session/open', params: { auth: { type: 'bearer', token: await mintBearer('end-of-input') } } };
      d.send(Buffer.concat([frameOf(init), frameOf(open), frameOf(probe('one')), frameOf(probe('two')), Buffer.from(tail)]));
      d.proc.stdin.end();
      const code = await Promise.race([d.exited, new Promise<string>((r) => setTimeout(() => r('still running'), 15_000).unref())]);
      assert.equal(code, exitCode, d.stderr());
      if (!d.proc.stdout.readableEnded) await new Promise((r) => d.proc.stdout.once('end', r));
      assert.ok(d.messages.find((m) => m.id === 'open')?.result, `session/open answered with a session\n${d.stderr()}`);
      for (const id of ['init', 'one', 'two']) assert.ok(d.messages.some((m) => m.id === id), `${id} answered\n${d.stderr()}`);
      if (logged) assert.match(d.stderr(), logged);
    } finally {
      d.kill();
    }
  });
}
