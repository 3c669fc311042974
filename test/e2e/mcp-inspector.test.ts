/**
 * The MCP Inspector CLI (`@modelcontextprotocol/inspector --cli`) against
 * both transports: list the tool, call it, read a skill resource. The
 * Inspector is not a dependency (it is large and its `engines` asks for a
 * newer Node than this project's, though its CLI mode runs on Node 20): set
 * TOOLGATE_MCP_INSPECTOR to its `mcp-inspector` bin to run this, e.g.
 *
 *   npm install --prefix /tmp/insp @modelcontextprotocol/inspector@2.12.0
 *   TOOLGATE_MCP_INSPECTOR=/tmp/insp/node_modules/.bin/mcp-inspector node --test dist/test/e2e/mcp-inspector.test.js
 *
 * `.ci/run` installs it that way and sets the variable, so CI runs this file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSession, startHost } from '../helpers/host.js';
import { startInProcess } from '../helpers/in-process.js';
import { TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { startOidcProvider } from '../helpers/oidc-provider.js';
import { mintBearer, TEST_BEARER_SECRET } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait-for.js';
import type { CallCancelResult, CallGetResult, ToolResponse } from '../../src/protocol/index.js';

const INSPECTOR = process.env.TOOLGATE_MCP_INSPECTOR;
const inspectorHome = tempDir();
const skip = INSPECTOR ? false : 'set TOOLGATE_MCP_INSPECTOR to the mcp-inspector bin to run the Inspector CLI';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the Inspector CLI without blocking this process: the authorization
 * server of the OAuth case runs in it and must answer toolgate's JWKS fetch
 * while the Inspector waits.
 */
function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      INSPECTOR!,
      ['--cli', ...args],
      // A HOME of its own: the Inspector keeps OAuth state in ~/.mcp-inspector, which must neither leak
      // into nor come from the developer's own.
      { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: inspectorHome, ...env }, timeout: 120_000 },
      (err, stdout, stderr) => resolve({ status: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

async function inspect(target: string[], method: string[], env: Record<string, string> = {}): Promise<unknown> {
  const r = await run([...target, ...method], env);
  assert.equal(r.status, 0, r.stderr);
  // Version banners (1.x) and the server's stderr may precede the JSON document.
  return JSON.parse(r.stdout.slice(r.stdout.indexOf('{\n')));
}

test('the MCP Inspector CLI lists, calls and reads a skill over stdio and over HTTP', { skip }, async () => {
  const token = await mintBearer('ines');
  // The HTTP target: the daemon in this process, on its real listener (the Inspector is what is checked).
  const host = await startInProcess({ transport: 'ws' });
  try {
    const stdio = [
      '-e', `TOOLGATE_BEARER_SECRET=${TEST_BEARER_SECRET}`, '-e', `TOOLGATE_MCP_TOKEN=${token}`,
      process.execPath, TOOLGATE_BIN, 'serve', '--mcp', '--db', host.dbPath,
    ];
    const http = [`http://127.0.0.1:${host.port}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${token}`];
    for (const target of [stdio, http]) {
      // The list, with its tool-schema portability lint in full (--strict; it prints the same list): it
      // finds nothing — no warning, no error (exit 6).
      const strict = await run([...target, '--method', 'tools/list', '--strict']);
      assert.equal(strict.status, 0, strict.stderr);
      assert.doesNotMatch(strict.stderr, /^(Warning|Error): tool|Schema portability/m);
      const listed = JSON.parse(strict.stdout.slice(strict.stdout.indexOf('{\n'))) as { tools: Array<{ name: string }> };
      assert.deepEqual(listed.tools.map((t) => t.name), ['project_cli']);
      const called = (await inspect(target, ['--method', 'tools/call', '--tool-name', 'project_cli', '--tool-arg', 'module=memory', 'method=read', 'input={}'])) as {
        structuredContent: { status: string };
      };
      assert.equal(called.structuredContent.status, 'success');
      const read = (await inspect(target, ['--method', 'resources/read', '--uri', 'skill://memory/SKILL.md'])) as { contents: Array<{ text: string }> };
      assert.match(read.contents[0]!.text, /^---\nname: memory/);
    }
  } finally {
    await host.stop();
  }
});

test('an ask call from the MCP Inspector CLI (no elicitation declared) waits and runs once approved on JSON-RPC', { skip }, async () => {
  // The Inspector's CLI cannot answer an elicitation (it declares none), so contract section 17's last case
  // applies: its tools/call waits until the same user decides on another surface, then prints the outcome.
  const dir = tempDir();
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ agents: { default: { enabled_skills: ['memory'], allowed_actions: ['memory.*'], approval: { ask: ['memory.forget'] } } } }));
  const token = await mintBearer('ina');
  const host = await startInProcess({ transport: 'ws', args: ['--config', config] });
  try {
    const rpc = await host.connect();
    const session = (await openSession(rpc, token)).session_id;
    const stdio = [
      '-e', `TOOLGATE_BEARER_SECRET=${TEST_BEARER_SECRET}`, '-e', `TOOLGATE_MCP_TOKEN=${token}`,
      '--', process.execPath, TOOLGATE_BIN, 'serve', '--mcp', '--db', host.dbPath, '--config', config,
    ];
    const http = [`http://127.0.0.1:${host.port}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${token}`];
    // http-2026: the 2026-07-28 revision (the Inspector's "modern" era, which also offers the tasks extension).
    const modern = [...http, '--protocol-era', 'modern'];
    for (const [kind, target] of [['stdio', stdio], ['http', http], ['http-2026', modern]] as const) {
      const thread = `inspector-ask-${kind}`;
      const key = `forget-${kind}`;
      const saved = await rpc.request<ToolResponse>('tool/invoke', {
        session_id: session, thread_id: thread, tool_call_id: `save-${kind}`, args: { module: 'memory', method: 'update', input: { key, content: 'keep me' } },
      });
      assert.equal(saved.status, 'success');
      const callId = `inspector-forget-${kind}`;
      // The server command comes last (after `--`) so its own --config is not read as the Inspector's.
      const [before, after] = kind === 'stdio' ? [target.slice(0, 4), target.slice(4)] : [target, []];
      let printed = false;
      const running = run([
        ...before,
        '--method', 'tools/call', '--tool-name', 'project_cli',
        '--tool-args-json', JSON.stringify({ module: 'memory', method: 'forget', input: { key } }),
        '--tool-metadata', `toolgate/thread_id=${thread}`, `toolgate/tool_call_id=${callId}`,
        ...after,
      ]).finally(() => (printed = true));
      const ids = { session_id: session, thread_id: thread, tool_call_id: callId };
      const pending = await waitFor(async () => {
        const got = await rpc.request<CallGetResult>('call/get', ids).catch(() => undefined);
        return got?.state === 'awaiting_approval' ? got : undefined;
      }, `the Inspector's ${kind} call awaiting approval`);
      assert.equal(pending.action, 'memory.forget');
      assert.equal(printed, false, 'the Inspector got an answer before any decision');
      const decided = await rpc.request<CallCancelResult>('call/approve', { ...ids, args_sha256: pending.args_sha256 });
      assert.equal(decided.state, 'done');
      const r = await running;
      assert.equal(r.status, 0, r.stderr);
      const result = JSON.parse(r.stdout.slice(r.stdout.indexOf('{\n'))) as { structuredContent: { status: string; data: { forgotten: boolean } } };
      assert.deepEqual([result.structuredContent.status, result.structuredContent.data.forgotten], ['success', true]);
    }
  } finally {
    await host.stop();
  }
});

test('the MCP Inspector CLI reaches /mcp with an access token from the authorization server (auth.issuer, no HS256 secret)', { skip }, async () => {
  const op = await startOidcProvider({ accountId: 'olga', resourceScopes: 'toolgate:mcp' });
  const dir = tempDir();
  const config = join(dir, 'config.json');
  const agents = { default: { enabled_skills: ['memory'], allowed_actions: ['memory.*'] } };
  writeFileSync(config, JSON.stringify({ agents, auth: { issuer: op.issuer, scopes: ['toolgate:mcp'] } }));
  const host = await startHost({ transport: 'ws', dataDir: dir, args: ['--config', config], env: { TOOLGATE_BEARER_SECRET: '' } });
  let token: string | undefined;
  try {
    const url = `http://127.0.0.1:${host.port}/mcp`;
    // Authorization code + PKCE with resource=<url>, login and consent automated: an audience-bound token.
    token = await op.mintAccessToken(url);
    const target = [url, '--transport', 'http', '--header', `Authorization: Bearer ${token}`];
    const listed = (await inspect(target, ['--method', 'tools/list'])) as { tools: Array<{ name: string }> };
    assert.deepEqual(listed.tools.map((t) => t.name), ['project_cli']);
    const called = (await inspect(target, [
      '--method', 'tools/call', '--tool-name', 'project_cli', '--tool-arg', 'module=memory', 'method=update', 'input={"key":"via","content":"the inspector"}',
    ])) as { structuredContent: { status: string } };
    assert.equal(called.structuredContent.status, 'success');
    // The call ran as the token's subject: olga reads back what she wrote.
    const read = (await inspect(target, ['--method', 'tools/call', '--tool-name', 'project_cli', '--tool-arg', 'module=memory', 'method=read', 'input={}'])) as {
      structuredContent: { data: unknown };
    };
    assert.match(JSON.stringify(read.structuredContent.data), /the inspector/);
    // Without the header the same server refuses the Inspector: it meets the 401 and, with no TTY, stops
    // before an interactive OAuth flow (exit 3, auth_required).
    const refused = await run([url, '--transport', 'http', '--method', 'tools/list']);
    assert.equal(refused.status, 3, refused.stderr);
    assert.match(refused.stdout + refused.stderr, /auth_required/);
  } finally {
    await host.stop();
    await op.close();
  }
  assert.ok(token && !host.stderr().includes(token.split('.')[2]!), 'nothing of the token in the log');
});
