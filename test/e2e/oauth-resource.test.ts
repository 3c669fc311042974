/**
 * toolgate as an OAuth 2.1 protected resource (contract sections 8 and 11):
 * a real `serve --ws` with `auth.issuer` pointing at a loopback authorization
 * server (test/helpers/oauth-issuer.ts) and no HS256 secret. Its access
 * tokens work on `/mcp` and `session/open`; a wrong audience, issuer, type or
 * an expired one is a 401 naming the RFC 9728 metadata; a rotated key is
 * picked up; the metadata, CORS and start-up checks are what clients see.
 *
 * Each test has its issuer and daemon (in this process, the in-process
 * executor: what is checked is who gets in, not how a call runs); the tests
 * run side by side, so their waits on the key cache's cooldown overlap. The
 * start-up checks spawn the binary (its stderr and exit code), all at once.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectMcp } from '../helpers/mcp-hosts.js';
import { openSession } from '../helpers/host.js';
import { startInProcess, type InProcessHost } from '../helpers/in-process.js';
import { startTestIssuer, type TestIssuer } from '../helpers/oauth-issuer.js';
import { TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { mintBearer } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait-for.js';
import { MCP_ACCEPT as ACCEPT, MCP_INIT as INIT } from '../helpers/mcp-raw.js';

const AGENTS = { default: { enabled_skills: ['calendar', 'memory'], allowed_actions: ['calendar.*', 'memory.*'] } };

/** A daemon trusting `issuer` only (no HS256 secret unless `env` sets one). */
async function startResource(issuer: TestIssuer, extra: { auth?: object; http?: object } = {}, env: Record<string, string> = {}): Promise<InProcessHost> {
  const dir = tempDir();
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ agents: AGENTS, auth: { issuer: issuer.issuer, ...extra.auth }, ...(extra.http ? { http: extra.http } : {}) }));
  return startInProcess({ transport: 'ws', dataDir: dir, args: ['--config', config], env: { TOOLGATE_BEARER_SECRET: '', ...env } });
}

const resourceOf = (host: InProcessHost) => `http://127.0.0.1:${host.port}/mcp`;
const metadataUrlOf = (host: InProcessHost) => `http://127.0.0.1:${host.port}/.well-known/oauth-protected-resource/mcp`;

async function post(host: InProcessHost, headers: Record<string, string> = {}, body: unknown = INIT): Promise<Response> {
  return fetch(resourceOf(host), { method: 'POST', headers: { ...ACCEPT, ...headers }, body: JSON.stringify(body) });
}

describe('toolgate as an OAuth 2.1 protected resource', { concurrency: true }, () => {
  test('an access token of auth.issuer: tools/call over /mcp works and lands in that user history; session/open takes it too', async () => {
    const issuer = await startTestIssuer();
    const host = await startResource(issuer);
    try {
      const token = await issuer.mint('oauth-ann', { aud: resourceOf(host), claims: { name: 'Ann' } });
      const mcp = await connectMcp('http', { token, port: host.port! });
      try {
        const created = await mcp.client.callTool({
          name: 'project_cli',
          arguments: { module: 'memory', method: 'update', input: { key: 'oauth', content: 'via the issuer' } },
        });
        assert.notEqual(created.isError, true, JSON.stringify(created));
        // The same token opens a JSON-RPC session (every transport goes through one authenticate()).
        const session = await openSession(host, token);
        assert.equal(session.user_id, 'oauth:oauth-ann', 'an issuer user is namespaced by its trust source');
        const history = await host.request<{ messages: Array<{ role: string; content: string }> }>('history/get', {
          session_id: session.session_id,
          thread_id: `mcp-${mcp.sessionId()}`,
          view: 'context',
        });
        const texts = history.messages.filter((m) => m.role === 'tool').map((m) => m.content);
        assert.ok(texts.includes((created.content as Array<{ text: string }>)[0]!.text), 'the MCP call is in the user history');
      } finally {
        await mcp.close();
      }
    } finally {
      await host.stop();
      await issuer.close();
    }
    // It ran with TOOLGATE_BEARER_SECRET empty (startResource): the issuer's tokens alone opened both sessions.
    assert.match(host.stderr(), /"msg":"session opened"/, 'served without TOOLGATE_BEARER_SECRET');
  });

  test('a 401 names the RFC 9728 metadata; a wrong aud, iss, typ, key or an expired token is invalid_token, never echoed', async () => {
    const issuer = await startTestIssuer();
    const other = await startTestIssuer();
    const host = await startResource(issuer);
    const challenge = `Bearer resource_metadata="${metadataUrlOf(host)}"`;
    const refused: string[] = [];
    try {
      const none = await post(host);
      assert.equal(none.status, 401);
      assert.equal(none.headers.get('www-authenticate'), challenge);

      const now = Math.floor(Date.now() / 1000);
      const bad = {
        'wrong aud': await issuer.mint('ann', { aud: 'https://other.example.com/mcp' }),
        'no aud': await issuer.mint('ann'),
        'wrong iss': await other.mint('ann', { aud: resourceOf(host) }),
        'iss claimed, key foreign': await issuer.mint('ann', { aud: resourceOf(host), foreignKey: true }),
        'expired': await issuer.mint('ann', { aud: resourceOf(host), exp: now - 60 }),
        'id token type': await issuer.mint('ann', { aud: resourceOf(host), typ: 'id+jwt' }),
        'no typ': await issuer.mint('ann', { aud: resourceOf(host), typ: null }),
      };
      for (const [what, token] of Object.entries(bad)) {
        refused.push(token);
        const res = await post(host, { authorization: `Bearer ${token}` });
        assert.equal(res.status, 401, what);
        assert.equal(res.headers.get('www-authenticate'), `${challenge}, error="invalid_token"`, what);
        const body = (await res.json()) as { error: { code: number; message: string } };
        assert.equal(body.error.code, -32001, what);
        assert.ok(!body.error.message.includes(token), what);
      }
      // The same refusal on session/open: -32001.
      await assert.rejects(openSession(host, bad['wrong aud']), (err: { code?: number }) => err.code === -32001);
      // A good one passes the same door.
      assert.equal((await post(host, { authorization: `Bearer ${await issuer.mint('ann', { aud: resourceOf(host), typ: 'JWT' })}` })).status, 200);
    } finally {
      await host.stop();
      await issuer.close();
      await other.close();
    }
    for (const token of refused) assert.ok(!host.stderr().includes(token), 'no token in the log');
  });

  test('a rotated signing key (new kid) is accepted within seconds; the retired one then is not', async () => {
    const issuer = await startTestIssuer();
    const host = await startResource(issuer);
    try {
      const aud = resourceOf(host);
      const old = await issuer.mint('rot', { aud });
      assert.equal((await post(host, { authorization: `Bearer ${old}` })).status, 200);
      await issuer.rotate();
      const fresh = await issuer.mint('rot', { aud });
      // Within the refetch cooldown (at most 5 s) the new kid may still be unknown; then it is fetched.
      await waitFor(async () => (await post(host, { authorization: `Bearer ${fresh}` })).status === 200, 'the rotated key to be accepted', 15_000, 200);
      assert.equal(issuer.jwksFetches, 2, 'one fetch at first use, one for the new kid');
      assert.equal((await post(host, { authorization: `Bearer ${old}` })).status, 401, 'the retired key is gone from the JWKS');
    } finally {
      await host.stop();
      await issuer.close();
    }
  });

  test('the issuer keys unavailable: a 503 / -32603 "retry" (never invalid_token) and one warning, no crash, no token in the log; then recovery', async () => {
    const issuer = await startTestIssuer();
    issuer.failJwks = true;
    const host = await startResource(issuer);
    let token = '';
    try {
      token = await issuer.mint('down', { aud: resourceOf(host) });
      const res = await post(host, { authorization: `Bearer ${token}` });
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '5');
      assert.match(((await res.json()) as { error: { message: string } }).error.message, /signing keys are unavailable/);
      await assert.rejects(openSession(host, token), (err: { code?: number; message?: string }) => err.code === -32603 && /unavailable.*retry/.test(err.message ?? ''));
      await waitFor(() => /"level":"warn".*signing keys could not be fetched/.test(host.stderr()), 'the warning');
      issuer.failJwks = false;
      await waitFor(async () => (await post(host, { authorization: `Bearer ${token}` })).status === 200, 'recovery once the JWKS answers', 15_000, 200);
    } finally {
      await host.stop();
      await issuer.close();
    }
    assert.ok(!host.stderr().includes(token));
  });

  test('metadata: both paths serve RFC 9728; public_url, audience and OpenID-only discovery of a path issuer', async () => {
    const issuer = await startTestIssuer({ discovery: 'oidc', path: '/realms/tools' });
    const host = await startResource(issuer, {
      auth: { audience: 'https://tools.example.com/mcp' },
      http: { public_url: 'https://tools.example.com/' },
    });
    try {
      const expected = {
        resource: 'https://tools.example.com/mcp',
        authorization_servers: [issuer.issuer],
        bearer_methods_supported: ['header'],
        scopes_supported: [],
      };
      for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
        const res = await fetch(`http://127.0.0.1:${host.port}${path}`);
        assert.equal(res.status, 200, path);
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
        assert.deepEqual(await res.json(), expected, path);
      }
      const none = await post(host);
      assert.equal(none.headers.get('www-authenticate'), 'Bearer resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/mcp"');
      // The audience is the configured one, whatever URL the request came in on.
      assert.equal((await post(host, { authorization: `Bearer ${await issuer.mint('kc', { aud: resourceOf(host) })}` })).status, 401);
      assert.equal((await post(host, { authorization: `Bearer ${await issuer.mint('kc', { aud: ['account', 'https://tools.example.com/mcp'] })}` })).status, 200);
      assert.ok(issuer.metadataFetches.includes('/.well-known/openid-configuration/realms/tools'), issuer.metadataFetches.join(', '));
    } finally {
      await host.stop();
      await issuer.close();
    }
  });

  test('HS256 tokens keep working beside the issuer; without auth.issuer there is no metadata', async () => {
    const issuer = await startTestIssuer();
    const host = await startResource(issuer, {}, { TOOLGATE_BEARER_SECRET: 'test-bearer-secret-0123456789abcdef' });
    try {
      assert.equal((await post(host, { authorization: `Bearer ${await mintBearer('hs-user')}` })).status, 200);
      assert.equal((await openSession(host, await mintBearer('hs-user'))).user_id, 'hs-user');
      assert.equal((await post(host, { authorization: `Bearer ${await issuer.mint('as-user', { aud: resourceOf(host) })}` })).status, 200);
    } finally {
      await host.stop();
      await issuer.close();
    }
    const plain = await startInProcess({ transport: 'ws' });
    try {
      assert.equal((await fetch(`http://127.0.0.1:${plain.port}/.well-known/oauth-protected-resource/mcp`)).status, 404);
    } finally {
      await plain.stop();
    }
  });

  test('CORS for browser MCP clients: preflight answered, headers exposed; a disallowed origin stays 403', async () => {
    const issuer = await startTestIssuer();
    const host = await startResource(issuer, { http: { allowed_origins: ['https://app.example.com'] } });
    try {
      const origin = 'https://app.example.com';
      for (const path of ['/mcp', '/.well-known/oauth-protected-resource/mcp']) {
        const pre = await fetch(`http://127.0.0.1:${host.port}${path}`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-protocol-version' },
        });
        assert.equal(pre.status, 204, path);
        assert.equal(pre.headers.get('access-control-allow-origin'), origin);
        const allowed = (pre.headers.get('access-control-allow-headers') ?? '').toLowerCase();
        for (const h of ['authorization', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']) assert.ok(allowed.includes(h), `${path} allows ${h}`);
        assert.match(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
      }
      const unauthorized = await post(host, { origin });
      assert.equal(unauthorized.status, 401);
      assert.equal(unauthorized.headers.get('access-control-allow-origin'), origin);
      assert.match(unauthorized.headers.get('access-control-expose-headers') ?? '', /WWW-Authenticate/);
      const opened = await post(host, { origin, authorization: `Bearer ${await issuer.mint('web', { aud: resourceOf(host) })}` });
      assert.equal(opened.status, 200);
      assert.ok(opened.headers.get('mcp-session-id'));
      assert.match(opened.headers.get('access-control-expose-headers') ?? '', /Mcp-Session-Id/);
      const meta = await fetch(metadataUrlOf(host), { headers: { origin } });
      assert.equal(meta.headers.get('access-control-allow-origin'), origin);

      const evil = await fetch(resourceOf(host), { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      assert.equal(evil.status, 403);
      assert.equal(evil.headers.get('access-control-allow-origin'), null);
    } finally {
      await host.stop();
      await issuer.close();
    }
  });

  test('start-up: a plain-http issuer beyond loopback, or a stdio serve without an audience, is one line naming the key, exit 2', async () => {
    const run = (config: object, transport: string) => {
      const dir = tempDir();
      const file = join(dir, 'config.json');
      writeFileSync(file, JSON.stringify({ agents: AGENTS, ...config }));
      const args = transport === 'ws' ? ['serve', '--ws', '--port', '0'] : ['serve', '--stdio'];
      const child = spawn(process.execPath, [TOOLGATE_BIN, ...args, '--config', file, '--db', join(dir, 'x.db')], {
        env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: dir },
        stdio: ['pipe', 'ignore', 'pipe'],
        timeout: 30_000,
      });
      child.stdin.end();
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      return new Promise<{ status: number | null; stderr: string }>((resolve) => child.on('close', (status) => resolve({ status, stderr })));
    };
    const cases: Array<[object, string, RegExp]> = [
      [{ auth: { issuer: 'http://idp.example.com/realms/x' } }, 'ws', /auth\.issuer: must be https:\/\//],
      [{ auth: { issuer: 'https://idp.example.com', jwks_url: 'http://keys.example.com/jwks' } }, 'ws', /auth\.jwks_url: must be https:\/\//],
      [{ auth: { audience: 'https://tools.example.com/mcp' } }, 'ws', /auth\.issuer: required when auth\.audience/],
      [{ http: { public_url: 'tools.example.com' } }, 'ws', /http\.public_url: must be an absolute/],
      [{ auth: { issuer: 'https://idp.example.com' } }, 'stdio', /auth\.audience: .*set auth\.audience/],
    ];
    const results = await Promise.all(cases.map(([config, transport]) => run(config, transport)));
    for (const [i, [config, , expected]] of cases.entries()) {
      const r = results[i]!;
      assert.equal(r.status, 2, `${JSON.stringify(config)}: ${r.stderr}`);
      const lines = r.stderr.trim().split('\n').filter((l) => !l.startsWith('{'));
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, expected);
    }
  });
});
