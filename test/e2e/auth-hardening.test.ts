/**
 * Contract section 21, the authentication items, as a host sees them: a
 * daemon served in this process with `auth.issuer` pointing at a loopback
 * authorization server (test/helpers/oauth-issuer.ts) beside an HS256
 * secret. Users of the two trust sources never meet; the issuer's keys fail
 * only the token that caused the failure.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { SignJWT } from 'jose';
import { join } from 'node:path';
import { connectMcp } from '../helpers/mcp-hosts.js';
import { openSession, rpcError } from '../helpers/host.js';
import { startInProcess, type InProcessHost } from '../helpers/in-process.js';
import { startTestIssuer, type TestIssuer } from '../helpers/oauth-issuer.js';
import { TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { MCP_ACCEPT, MCP_INIT } from '../helpers/mcp-raw.js';
import { waitFor } from '../helpers/wait-for.js';
import { mintBearer, TEST_BEARER_SECRET } from '../helpers/tokens.js';

const AGENTS = { default: { enabled_skills: ['calendar', 'memory'], allowed_actions: ['calendar.*', 'memory.*'] } };

/** A daemon trusting `issuer` and the test HS256 secret. */
async function startBoth(issuer: TestIssuer, auth: object = {}): Promise<InProcessHost> {
  const dir = tempDir();
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ agents: AGENTS, auth: { issuer: issuer.issuer, ...auth } }));
  return startInProcess({ transport: 'ws', dataDir: dir, args: ['--config', config], env: { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET } });
}

/** An HS256 token of the test secret that expired at 2020-01-01T00:10:00Z. */
const EXPIRED_TOKEN = await new SignJWT({})
  .setProtectedHeader({ alg: 'HS256' })
  .setSubject('late')
  .setIssuedAt(1_577_836_800)
  .setExpirationTime(1_577_837_400)
  .sign(new TextEncoder().encode(TEST_BEARER_SECRET));

const resourceOf = (host: InProcessHost) => `http://127.0.0.1:${host.port}/mcp`;

interface Projection {
  status: string;
  // The memories read back: only their count matters here (each one's shape is checked against schemas/ by the host helper).
  data?: { items?: unknown[] };
}

async function invoke(host: InProcessHost, sessionId: string, id: string, module: string, method: string, input: object): Promise<Projection> {
  const r = await host.request<{ content: Array<{ text: string }> }>('tool/invoke', {
    session_id: sessionId,
    thread_id: 't-auth',
    tool_call_id: id,
    args: { module, method, input },
  });
  return JSON.parse(r.content[0]!.text) as Projection;
}

test('an issuer token and an HS256 token with the same sub are two users: neither reads the other', async () => {
  const issuer = await startTestIssuer();
  const host = await startBoth(issuer);
  try {
    const hs = await openSession(host, await mintBearer('x'));
    assert.equal(hs.user_id, 'x', 'HS256 users keep their ids');
    assert.equal((await invoke(host, hs.session_id, 'c1', 'memory', 'update', { key: 'k', content: 'of the HS256 user' })).status, 'success');

    const other = await host.connect();
    const oauthToken = await issuer.mint('x', { aud: resourceOf(host) });
    const as = await openSession(other, oauthToken);
    assert.equal(as.user_id, 'oauth:x', "session/open's user_id names the trust source");
    const read = JSON.parse(
      (await other.request<{ content: Array<{ text: string }> }>('tool/invoke', {
        session_id: as.session_id,
        thread_id: 't-auth',
        tool_call_id: 'c1',
        args: { module: 'memory', method: 'read', input: {} },
      })).content[0]!.text,
    ) as Projection;
    assert.equal(read.status, 'success');
    assert.deepEqual(read.data?.items ?? [], [], "the issuer user sees none of the HS256 user's memories");

    // The same over /mcp.
    const mcp = await connectMcp('http', { token: oauthToken, port: host.port! });
    try {
      const res = await mcp.client.callTool({ name: 'project_cli', arguments: { module: 'memory', method: 'read', input: {} } });
      const sc = res.structuredContent as Projection;
      assert.equal(sc.status, 'success');
      assert.deepEqual(sc.data?.items ?? [], []);
    } finally {
      await mcp.close();
    }
    await other.close();

    // The reserved prefix cannot be claimed with the HS256 secret.
    const err = await rpcError(openSession(await host.connect(), await mintBearer('oauth:x')));
    assert.equal(err.code, -32001);
    assert.match(err.message, /reserved/);
  } finally {
    await host.stop();
    await issuer.close();
  }
});

test('issuer down: tokens whose key is cached keep working; unknown kids get 503, never invalid_token', async () => {
  const issuer = await startTestIssuer();
  const host = await startBoth(issuer);
  const post = (token: string) =>
    fetch(resourceOf(host), { method: 'POST', headers: { ...MCP_ACCEPT, authorization: `Bearer ${token}` }, body: JSON.stringify(MCP_INIT) });
  try {
    const good = await issuer.mint('cached', { aud: resourceOf(host) });
    assert.equal((await post(good)).status, 200);
    issuer.failJwks = true;
    const unknownKid = await issuer.mint('cached', { aud: resourceOf(host), foreignKey: true });
    // Within the cooldown of the last good fetch an unknown kid is simply not the issuer's (401); past it,
    // the refetch fails and the daemon cannot tell.
    await waitFor(async () => (await post(unknownKid)).status === 503, 'the refetch past the cooldown to fail', 15_000, 200);
    for (let i = 0; i < 10; i++) {
      const refused = await post(unknownKid);
      assert.equal(refused.status, 503, 'the issuer cannot say whether this key is new: try again');
      assert.equal(refused.headers.get('www-authenticate'), null, 'no invalid_token for a token that may be good');
      assert.equal((await post(good)).status, 200, 'the cached key keeps working');
    }
    const err = await rpcError(openSession(await host.connect(), unknownKid));
    assert.equal(err.code, -32603);
    assert.match(err.message, /unavailable.*retry/);
    assert.ok(issuer.jwksFetches <= 3, `at most one refetch per cooldown (${issuer.jwksFetches} fetches)`);
    assert.ok(!host.stderr().includes(unknownKid) && !host.stderr().includes(good));
  } finally {
    await host.stop();
    await issuer.close();
  }
});

test('auth.max_token_lifetime_s counts from min(iat, now): a future iat does not stretch a token', async () => {
  const dir = tempDir();
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ agents: AGENTS, auth: { max_token_lifetime_s: 3600 } }));
  const host = await startInProcess({ dataDir: dir, args: ['--config', config] });
  try {
    const now = Math.floor(Date.now() / 1000);
    const sign = (iat: number, exp: number) =>
      new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('life').setIssuedAt(iat).setExpirationTime(exp).sign(new TextEncoder().encode(TEST_BEARER_SECRET));
    // Ten days ahead, living 30 minutes from its claimed iat: valid for ten days from now.
    const err = await rpcError(openSession(host, await sign(now + 10 * 86_400, now + 10 * 86_400 + 1800)));
    assert.equal(err.code, -32001);
    assert.match(err.message, /max_token_lifetime_s/);
    // Within the bound from now: accepted, whatever its iat.
    assert.equal((await openSession(host, await sign(now + 60, now + 1800))).user_id, 'life');
  } finally {
    await host.stop();
  }
});

test('/mcp: no header value comes back in an error (MCP-Protocol-Version, Mcp-Session-Id, Mcp-Name…)', async () => {
  const host = await startInProcess({ transport: 'ws' });
  const token = await mintBearer('echo');
  const mark = await mintBearer('pasted-in-a-header');
  const post = (headers: Record<string, string>, body: unknown) =>
    fetch(`http://127.0.0.1:${host.port}/mcp`, { method: 'POST', headers: { ...MCP_ACCEPT, authorization: `Bearer ${token}`, ...headers }, body: JSON.stringify(body) });
  try {
    const init = await post({}, MCP_INIT);
    const sid = init.headers.get('mcp-session-id')!;
    await init.body?.cancel();
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const modern = {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: {
        name: 'project_cli',
        arguments: { module: 'memory', method: 'read', input: {} },
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'x', version: '1' } },
      },
    };
    const cases: Array<[string, Record<string, string>, unknown]> = [
      ['MCP-Protocol-Version on a session', { 'mcp-session-id': sid, 'mcp-protocol-version': mark }, list],
      ['MCP-Protocol-Version without a session', { 'mcp-protocol-version': mark }, list],
      ['an unknown Mcp-Session-Id', { 'mcp-session-id': mark }, list],
      ['Mcp-Name on a modern request', { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': mark }, modern],
      ['Mcp-Method on a modern request', { 'mcp-protocol-version': '2026-07-28', 'mcp-method': mark }, modern],
    ];
    let errors = 0;
    for (const [what, headers, body] of cases) {
      const res = await post(headers, body);
      const text = await res.text();
      if (res.status >= 400) errors += 1;
      assert.ok(!text.includes(mark) && !text.includes(mark.slice(0, 20)), `${what}: ${res.status} ${text.slice(0, 200)}`);
    }
    assert.ok(errors >= 3, `the cases are refused (${errors})`);
  } finally {
    await host.stop();
  }
});

test('a login refusal says which check failed, on the wire and in the log, never echoing the token', async () => {
  const host = await startInProcess({ env: { TOOLGATE_BEARER_ISSUER: 'https://id.example.com', TOOLGATE_BEARER_AUDIENCE: 'toolgate' } });
  const secret = new TextEncoder().encode(TEST_BEARER_SECRET);
  const now = Math.floor(Date.now() / 1000);
  const base = () => new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('why').setIssuer('https://id.example.com').setAudience('toolgate').setIssuedAt(now - 120);
  const cases: Array<[string, string, RegExp]> = [
    ['expired', await base().setExpirationTime(now - 60).sign(secret), new RegExp(`expired at ${new Date((now - 60) * 1000).toISOString().slice(0, 19)}Z`)],
    ['another secret', await base().setExpirationTime('10m').sign(new TextEncoder().encode('another-secret-0123456789abcdef')), /signature does not verify with the configured secret/],
    ['not a JWT', 'not-a-jwt-at-all', /not a JWT/],
    ['another issuer', await base().setIssuer('https://elsewhere.example.com').setExpirationTime('10m').sign(secret), /issuer mismatch/],
    ['another audience', await base().setAudience('someone-else').setExpirationTime('10m').sign(secret), /audience mismatch/],
    ['no exp', await base().sign(secret), /no "exp" claim/],
  ];
  try {
    for (const [what, token, why] of cases) {
      const err = await rpcError(openSession(host, token));
      assert.equal(err.code, -32001, what);
      assert.match(err.message, why, what);
      assert.ok(!JSON.stringify(err).includes(token), `${what}: the token is not echoed`);
    }
  } finally {
    await host.stop();
  }
  const refusals = host.stderr().split('\n').filter((l) => l.includes('"msg":"bearer token refused"')).map((l) => (JSON.parse(l) as { reason: string }).reason);
  assert.equal(refusals.length, cases.length, 'one log line per refusal');
  for (const [what, , why] of cases) assert.ok(refusals.some((l) => why.test(l)), `${what}: the log says why`);
  for (const [, token] of cases) assert.ok(!host.stderr().includes(token));
});

test('serve --mcp with an expired TOOLGATE_MCP_TOKEN exits naming the reason', () => {
  const expired = spawnSync(process.execPath, [TOOLGATE_BIN, 'serve', '--mcp', '--db', join(tempDir(), 't.db')], {
    env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: tempDir(), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_MCP_TOKEN: EXPIRED_TOKEN },
    encoding: 'utf8',
    input: '',
    timeout: 20_000,
  });
  assert.equal(expired.status, 2, expired.stderr);
  // The token is read once the daemon is built: a log line of its own (the project-cli launch check, which runs
  // in the background from then on) may land before the exit. It is a log line, not the error (as for a refused
  // listen, test/unit/app/cli-help.test.ts).
  const lines = expired.stderr.trimEnd().split('\n').filter((l) => !/^\{"ts":"[^"]+","level":"(debug|info)"/.test(l));
  assert.deepEqual(lines, ['toolgate: TOOLGATE_MCP_TOKEN: bearer token refused: expired at 2020-01-01T00:10:00Z']);
});
