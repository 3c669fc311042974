/**
 * Who may use MCP, and what they see: bearer tokens on every HTTP request,
 * Host/Origin checks, sessions bound to the user who opened them, the agent
 * profile of `mcp.agent` (a disabled skill is invisible), and a stdio server
 * whose token expires mid-session.
 *
 * The daemons run in this process (test/helpers/in-process.ts), `serve --mcp`'s
 * stdio server included, with the in-process executor: what is checked is who
 * gets in and what they see, not how a call runs. `serve --mcp`'s refusals
 * (exit 2) and its data folder spawn the binary. The tests run side by side.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client as McpClient } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { connectMcp, type McpKind } from '../helpers/mcp-hosts.js';
import { startInProcess, startMcpInProcess } from '../helpers/in-process.js';
import { TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { mintBearer, TEST_BEARER_SECRET } from '../helpers/tokens.js';
import { MCP_ACCEPT as ACCEPT, MCP_INIT as INIT } from '../helpers/mcp-raw.js';

/** Runs the binary to its end (stdin empty); its exit code and output. */
function run(args: string[], opts: { env: Record<string, string>; cwd?: string }): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [TOOLGATE_BIN, ...args], { env: opts.env, cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end();
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

async function post(port: number, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: { ...ACCEPT, ...headers }, body: JSON.stringify(body) });
}

describe('who may use MCP, and what they see', { concurrency: true }, () => {
  test('HTTP /mcp: no token → 401 with WWW-Authenticate: Bearer and no OAuth metadata; a bad token → 401, never echoed', async () => {
    const host = await startInProcess({ transport: 'ws' });
    try {
      const none = await post(host.port!, INIT);
      assert.equal(none.status, 401);
      assert.equal(none.headers.get('www-authenticate'), 'Bearer');
      const body = await none.text();
      assert.doesNotMatch(body + (none.headers.get('www-authenticate') ?? ''), /resource_metadata|oauth/i);

      const forged = await mintBearer('mia', {}, { secret: 'another-secret-another-secret-000' });
      const bad = await post(host.port!, INIT, { authorization: `Bearer ${forged}` });
      assert.equal(bad.status, 401);
      assert.match(bad.headers.get('www-authenticate') ?? '', /^Bearer/);
      assert.ok(!(await bad.text()).includes(forged));
      const expired = await mintBearer('mia', {}, { expiresIn: Math.floor(Date.now() / 1000) - 60 });
      assert.equal((await post(host.port!, INIT, { authorization: `Bearer ${expired}` })).status, 401);
      assert.equal((await fetch(`http://127.0.0.1:${host.port}/.well-known/oauth-protected-resource`)).status, 404);
    } finally {
      await host.stop();
    }
    assert.ok(!host.stderr().includes('another-secret'), 'nothing of the token in the log');
  });

  test('HTTP /mcp: a foreign Origin or Host → 403; loopback ones and configured ones pass', async () => {
    const dir = tempDir();
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({
      agents: { default: { enabled_skills: ['calendar'], allowed_actions: ['calendar.read'] } },
      http: { allowed_origins: ['https://app.example.com'], allowed_hosts: ['127.0.0.1', 'mcp.example.com'] },
    }));
    const token = await mintBearer('mia');
    const auth = { authorization: `Bearer ${token}` };
    const plain = await startInProcess({ transport: 'ws' });
    const configured = await startInProcess({ transport: 'ws', dataDir: dir, args: ['--config', config] });
    try {
      assert.equal((await post(plain.port!, INIT, { ...auth, origin: 'https://evil.example' })).status, 403);
      assert.equal((await post(plain.port!, INIT, { ...auth, origin: `http://localhost:${plain.port}` })).status, 200);
      // fetch sets Host itself; a raw request shows the DNS-rebinding case.
      const rebound = await rawPost(plain.port!, 'attacker.example', token);
      assert.equal(rebound, 403);

      assert.equal((await post(configured.port!, INIT, { ...auth, origin: 'https://app.example.com' })).status, 200);
      assert.equal((await post(configured.port!, INIT, { ...auth, origin: 'http://localhost' })).status, 403);
      assert.equal(await rawPost(configured.port!, 'mcp.example.com', token), 200);
      assert.equal(await rawPost(configured.port!, 'localhost', token), 403);
    } finally {
      await plain.stop();
      await configured.stop();
    }
  });

  async function rawPost(port: number, hostHeader: string, token: string): Promise<number> {
    const { request } = await import('node:http');
    return new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { ...ACCEPT, host: hostHeader, authorization: `Bearer ${token}` } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(INIT));
    });
  }

  test('HTTP /mcp: a session is bound to its user; DELETE ends it; a body over max_message_bytes → 413', async () => {
    const host = await startInProcess({ transport: 'ws', args: ['--max-message-bytes', '4096'] });
    const mia = await mintBearer('mia');
    const bob = await mintBearer('bob');
    try {
      const opened = await post(host.port!, INIT, { authorization: `Bearer ${mia}` });
      assert.equal(opened.status, 200);
      const sid = opened.headers.get('mcp-session-id')!;
      assert.ok(sid);
      await opened.text();
      const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
      const session = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
      assert.equal((await post(host.port!, { jsonrpc: '2.0', method: 'notifications/initialized' }, { authorization: `Bearer ${mia}`, ...session })).status, 202);

      const stolen = await post(host.port!, list, { authorization: `Bearer ${bob}`, ...session });
      assert.equal(stolen.status, 404, 'another user’s token on the session is refused like an unknown session');
      const own = await post(host.port!, list, { authorization: `Bearer ${mia}`, ...session });
      assert.equal(own.status, 200);
      assert.match(await own.text(), /project_cli/);
      assert.equal((await post(host.port!, list, session)).status, 401, 'every request needs the token');

      const big = await post(host.port!, { ...list, params: { pad: 'x'.repeat(8192) } }, { authorization: `Bearer ${mia}`, ...session });
      assert.equal(big.status, 413);

      const ended = await fetch(`http://127.0.0.1:${host.port}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${mia}`, ...session } });
      assert.equal(ended.status, 200);
      assert.equal((await post(host.port!, list, { authorization: `Bearer ${mia}`, ...session })).status, 404);
    } finally {
      await host.stop();
    }
  });

  for (const kind of ['stdio', 'http'] as McpKind[]) {
    test(`${kind}: the mcp.agent profile decides; a disabled skill is neither listed nor readable`, async () => {
      const dir = tempDir();
      const config = join(dir, 'config.json');
      writeFileSync(config, JSON.stringify({
        agents: {
          default: { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.read', 'memory.*'] },
          reader: { enabled_skills: ['calendar', 'memory'], allowed_actions: ['calendar.read', 'memory.read'] },
        },
        mcp: { agent: 'reader' },
      }));
      const token = await mintBearer('mia');
      // stdio: `serve --mcp`'s own server, in this process; http: /mcp of a `serve --ws`.
      const mcp: { client: McpClient; close(): Promise<void> } =
        kind === 'stdio'
          ? await startMcpInProcess(token, { dataDir: dir, args: ['--config', config] }).then((m) => ({ client: m.client, close: () => m.stop() }))
          : await startInProcess({ transport: 'ws', dataDir: dir, args: ['--config', config] }).then(async (host) => {
              const http = await connectMcp('http', { token, port: host.port! });
              return { client: http.client, close: () => http.close().finally(() => host.stop()) };
            });
      try {
        const { tools } = await mcp.client.listTools();
        assert.doesNotMatch(tools[0]!.description ?? '', /contacts/);
        assert.equal(tools[0]!.annotations?.readOnlyHint, true, 'a read-only whitelist is announced as such');
        const skills = await new SkillsClient(mcp.client).list();
        assert.deepEqual(skills.skills.map((s) => s.frontmatter.name).sort(), ['calendar', 'memory']);
        const { resources } = await mcp.client.listResources();
        assert.ok(!resources.some((r) => r.uri.startsWith('skill://contacts/')));
        await assert.rejects(mcp.client.readResource({ uri: 'skill://contacts/SKILL.md' }));
        assert.ok(!(await mcp.client.listPrompts()).prompts.some((p) => p.name === 'contacts'));
        await assert.rejects(mcp.client.getPrompt({ name: 'contacts' }));
        const write = (await mcp.client.callTool({ name: 'project_cli', arguments: { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } } })) as {
          structuredContent: { error: { code: string } };
        };
        assert.equal(write.structuredContent.error.code, 'ACTION_NOT_ALLOWED');
      } finally {
        await mcp.close();
      }
    });
  }

  test('stdio: TOOLGATE_MCP_AGENT wins over mcp.agent', async () => {
    const dir = tempDir();
    const token = await mintBearer('mia');
    const mcp = await startMcpInProcess(token, { dataDir: dir, env: { TOOLGATE_MCP_AGENT: 'default' } });
    try {
      assert.equal((await mcp.client.listPrompts()).prompts.length, 3);
    } finally {
      await mcp.stop();
    }
  });

  test('serve --mcp without a token, or with a bad one, stops with a clear message and exit 2', async () => {
    const dir = tempDir();
    const serveMcp = (env: Record<string, string>) =>
      run(['serve', '--mcp', '--db', join(dir, 'x.db')], { env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: tempDir(), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, ...env } });
    const badToken = await mintBearer('mia', {}, { secret: 'another-secret-another-secret-000' });
    const [none, bad] = await Promise.all([serveMcp({}), serveMcp({ TOOLGATE_MCP_TOKEN: badToken })]);
    assert.equal(none.status, 2);
    assert.match(none.stderr, /TOOLGATE_MCP_TOKEN/);
    assert.equal(bad.status, 2);
    assert.ok(!bad.stderr.includes(badToken));
    assert.equal(bad.stdout, '', 'nothing but MCP on stdout');
  });

  test('the default database does not depend on the working directory: TOOLGATE_HOME, else XDG_DATA_HOME/toolgate, else ~/.local/share/toolgate', async () => {
    const home = tempDir();
    const xdg = tempDir();
    const tg = tempDir();
    const devToken = (env: Record<string, string>) => run(['dev-token', '--user', 'mia'], { cwd: '/', env: { PATH: process.env.PATH ?? '', ...env } });
    // Each writes its own folder: the three run at once.
    const [byHome, byXdg, token] = await Promise.all([devToken({ HOME: home }), devToken({ HOME: home, XDG_DATA_HOME: xdg }), devToken({ HOME: home, XDG_DATA_HOME: xdg, TOOLGATE_HOME: tg })]);
    assert.equal(byHome.status, 0);
    assert.ok(existsSync(join(home, '.local', 'share', 'toolgate', 'dev-bearer-secret')));
    assert.equal(byXdg.status, 0);
    assert.ok(existsSync(join(xdg, 'toolgate', 'dev-bearer-secret')));
    assert.equal(token.status, 0);
    assert.ok(existsSync(join(tg, 'dev-bearer-secret')));
    // An MCP host starting the server from `/` finds that same folder: the dev secret verifies the token.
    const served = await run(['serve', '--mcp', '--dev'], {
      cwd: '/',
      env: { PATH: process.env.PATH ?? '', HOME: home, TOOLGATE_HOME: tg, TOOLGATE_MCP_TOKEN: token.stdout.trim() },
    });
    assert.equal(served.status, 0, served.stderr);
    assert.ok(existsSync(join(tg, 'toolgate.db')));
  });
});
