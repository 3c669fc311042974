/**
 * Contract section 7: a token never comes back in an error because a client
 * named it (a method, a key, a tool, a resource URI, a prompt, a module), and a
 * token split by whitespace or invisible characters, or padded, is refused like
 * a whole one. Every byte of every answer and of stderr is scanned, on stdio,
 * WebSocket, `serve --mcp` and `/mcp`; ordinary names are still echoed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { startRaw } from '../helpers/raw-stdio.js';
import { startHost } from '../helpers/host.js';
import { connectMcp, MCP_KINDS } from '../helpers/mcp-hosts.js';
import { mintBearer } from '../helpers/tokens.js';
import { splitVariants } from '../helpers/split-tokens.js';
import type { RpcError } from '../../src/protocol/errors.js';

type Answer = { id?: unknown; result?: unknown; error?: RpcError };

/** A raw JSON-RPC peer: send a request, get its answer as the daemon wrote it; every byte is kept. */
interface Peer {
  call(method: string, params?: unknown): Promise<Answer>;
  bytes(): string;
  stderr(): string;
  dataDir: string;
  stop(): Promise<void>;
}

async function stdioPeer(): Promise<Peer> {
  const d = startRaw();
  let next = 0;
  return {
    async call(method, params) {
      const id = `r${next++}`;
      d.frame({ jsonrpc: '2.0', id, method, params });
      const a = await d.waitFor((m) => m.id === id);
      assert.ok(a, `${method} answered`);
      return a as Answer;
    },
    bytes: () => JSON.stringify(d.messages),
    stderr: d.stderr,
    dataDir: d.dataDir,
    async stop() {
      d.proc.stdin.end();
      await d.exited;
    },
  };
}

async function wsPeer(): Promise<Peer> {
  const host = await startHost({ transport: 'ws' });
  const socket = new WebSocket(`ws://127.0.0.1:${host.port}/rpc`);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const frames: string[] = [];
  const waiters = new Map<string, (a: Answer) => void>();
  socket.on('message', (data: Buffer) => {
    const text = data.toString('utf8');
    frames.push(text);
    const a = JSON.parse(text) as Answer;
    waiters.get(String(a.id))?.(a);
  });
  let next = 0;
  return {
    call(method, params) {
      const id = `r${next++}`;
      return new Promise((resolve) => {
        waiters.set(id, resolve);
        socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      });
    },
    bytes: () => frames.join('\n'),
    stderr: host.stderr,
    dataDir: host.dataDir,
    async stop() {
      socket.close();
      await host.stop();
    },
  };
}

/** The pieces of a (split) token a leak would show: every run of 16+ characters without whitespace or invisible ones. */
function marksOf(text: string): string[] {
  return text.split(/[\s=\p{Cf}\p{Default_Ignorable_Code_Point}.]+/u).filter((piece) => piece.length >= 16);
}

function assertNowhere(where: string, haystack: string, marks: readonly string[]): void {
  for (const m of marks) assert.ok(!haystack.includes(m), `${where} holds ${m.slice(0, 12)}…`);
}

for (const [transport, start] of [['stdio', stdioPeer], ['ws', wsPeer]] as const) {
  test(`${transport}: a token named as a method, a key or a module is never echoed; ordinary names are`, async () => {
    const peer = await start();
    const token = await mintBearer('alice');
    const named = [`x${token}`, ...Object.values(splitVariants(token)).slice(0, 4)];
    const marks = [...new Set(named.flatMap(marksOf))];
    try {
      await peer.call('initialize', { protocol_version: '1' });
      const open = await peer.call('session/open', { auth: { type: 'bearer', token } });
      const session_id = (open.result as { session_id: string }).session_id;
      const before = peer.bytes().length;
      for (const name of named) {
        const unknown = await peer.call(name, {});
        assert.equal(unknown.error?.code, -32601);
        assert.equal(unknown.error?.message, 'unknown method [redacted]');
        const key = await peer.call('message/append', { session_id, thread_id: 't', role: 'user', content: 'hi', [name]: 1 });
        assert.equal(key.error?.code, -32602);
        const module = await peer.call('tool/invoke', { session_id, thread_id: 't', tool_call_id: `c${marks.length}`, args: { module: name, method: 'read', input: {} } });
        assert.ok(module.error || (module.result as { status: string }).status === 'failure');
        const skill = await peer.call('skills/read', { session_id, name });
        assert.ok(skill.error);
      }
      assertNowhere('the answers', peer.bytes().slice(before), marks);
      const plain = await peer.call('no/such-method', {});
      assert.equal(plain.error?.message, 'unknown method no/such-method');
      const plainKey = await peer.call('message/append', { session_id, thread_id: 't', role: 'user', content: 'hi', colour: 1 });
      assert.match(JSON.stringify(plainKey.error), /colour/);
    } finally {
      await peer.stop();
    }
    assertNowhere('stderr', peer.stderr(), marks);
  });

  test(`${transport}: the split or padded forms of a token are refused on tool/invoke and message/append, stored nowhere`, async () => {
    const peer = await start();
    const token = await mintBearer('alice');
    const variants = Object.entries(splitVariants(token));
    const marks = [...new Set(variants.flatMap(([, v]) => marksOf(v)))];
    try {
      await peer.call('initialize', { protocol_version: '1' });
      const open = await peer.call('session/open', { auth: { type: 'bearer', token } });
      const session_id = (open.result as { session_id: string }).session_id;
      const before = peer.bytes().length;
      for (const [i, [name, text]] of variants.entries()) {
        const call = await peer.call('tool/invoke', {
          session_id, thread_id: 'paste', tool_call_id: `v${i}`, args: { module: 'memory', method: 'update', input: { key: `k${i}`, content: `note: ${text}` } },
        });
        const result = call.result as { status: string; content: Array<{ text: string }> };
        assert.equal(result.status, 'failure', name);
        assert.equal((JSON.parse(result.content[0]!.text) as { error: { code: string } }).error.code, 'UNAUTHENTICATED', name);
        const append = await peer.call('message/append', { session_id, thread_id: 'paste', role: 'user', content: `pasted ${text} here` });
        assert.equal(append.error?.code, -32602, name);
        assert.equal((append.error?.data as { code?: string } | undefined)?.code, 'CREDENTIAL_REFUSED', name);
      }
      const list = await peer.call('thread/list', { session_id });
      assert.deepEqual((list.result as { threads: unknown[] }).threads, []);
      assertNowhere('the answers', peer.bytes().slice(before), marks);
    } finally {
      await peer.stop();
    }
    assertNowhere('stderr', peer.stderr(), marks);
    for (const f of readdirSync(peer.dataDir).filter((n) => n.startsWith('toolgate.db'))) {
      assertNowhere(f, readFileSync(join(peer.dataDir, f)).toString('latin1'), marks);
    }
  });
}

for (const kind of MCP_KINDS) {
  test(`MCP ${kind}: a token named as a tool, a resource, a prompt, a skill or a module is never echoed`, async () => {
    const host = kind === 'stdio' ? undefined : await startHost({ transport: 'ws' });
    const token = await mintBearer('alice');
    const dataDir = host?.dataDir ?? (await import('../helpers/repo.js')).tempDir();
    const mcp = await connectMcp(kind, { token, port: host?.port, dbPath: join(dataDir, 'toolgate.db') });
    const named = [`x${token}`, splitVariants(token)['a 76-column wrap']!];
    const marks = [...new Set(named.flatMap(marksOf))];
    const errors: string[] = [];
    const keep = (e: unknown) => void errors.push(`${(e as Error).message} ${JSON.stringify(e)}`);
    try {
      for (const name of named) {
        await mcp.client.callTool({ name, arguments: {} }).then((r) => errors.push(JSON.stringify(r)), keep);
        await mcp.client.readResource({ uri: `skill://calendar/${name}` }).then((r) => errors.push(JSON.stringify(r)), keep);
        await mcp.client.getPrompt({ name }).then((r) => errors.push(JSON.stringify(r)), keep);
        await new SkillsClient(mcp.client).get(`skill://${name}/SKILL.md`).then((r) => errors.push(JSON.stringify(r)), keep);
        const r = await mcp.client.callTool({ name: 'project_cli', arguments: { module: name, method: 'read' } });
        assert.equal(r.isError, true);
        errors.push(JSON.stringify(r));
      }
      assert.ok(errors.some((e) => e.includes('Tool [redacted] not found')), errors.join('\n'));
      assertNowhere('the errors', errors.join('\n'), marks);
      assertNowhere('the wire', JSON.stringify(mcp.wire), marks);
      const plain = await mcp.client.callTool({ name: 'no_such_tool', arguments: {} }).then(JSON.stringify, (e: Error) => e.message);
      assert.match(plain, /Tool no_such_tool not found/);
    } finally {
      await mcp.close();
      await host?.stop();
    }
    assertNowhere('stderr', mcp.stderr() + (host?.stderr() ?? ''), marks);
  });
}
