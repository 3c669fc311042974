/**
 * A remote MCP host connecting the way the MCP authorization spec
 * (2025-11-25) prescribes, against a real authorization server: toolgate
 * `serve --ws` with `auth.issuer` set to an `oidc-provider` on loopback, and
 * the official TypeScript client (`@modelcontextprotocol/client` v2) with no
 * token. The client meets the 401, reads RFC 9728 metadata from the
 * `WWW-Authenticate` pointer, discovers the provider, registers itself
 * (RFC 7591), runs authorization code + PKCE with `resource` (RFC 8707) —
 * login and consent automated over HTTP — and calls `project_cli`; the call
 * lands in the history of the user the token names. Tokens the resource must
 * refuse (another audience, another issuer) get 401 `invalid_token`; a key
 * the provider rotated in is picked up.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { startInProcess, type InProcessHost } from '../../helpers/in-process.js';
import { tempDir } from '../../helpers/repo.js';
import { dbRows } from '../../helpers/db.js';
import { waitFor } from '../../helpers/wait-for.js';
import { startOidcProvider, type OidcProviderHandle } from '../../helpers/oidc-provider.js';
import { connectWithOAuth, InMemoryOAuthClientProvider } from '../../helpers/mcp-oauth-client.js';
import { MCP_ACCEPT as ACCEPT, MCP_INIT as INIT } from '../../helpers/mcp-raw.js';

const EVENT = { title: 'Booked over OAuth', start_at: '2026-06-01T09:00:00Z', end_at: '2026-06-01T10:00:00Z' };

async function postInit(url: string, token?: string): Promise<Response> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...ACCEPT, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(INIT),
  });
  await res.body?.cancel();
  return res;
}

/** Starts `serve --ws`; with `issuer`, that issuer's tokens are its only user tokens (no HS256 secret). */
async function serveWithIssuer(issuer: string | undefined, auth: object = {}): Promise<InProcessHost> {
  const dir = tempDir();
  const config = join(dir, 'config.json');
  const agents = { default: { enabled_skills: ['calendar', 'memory'], allowed_actions: ['calendar.*', 'memory.*'] } };
  writeFileSync(config, JSON.stringify(issuer ? { agents, auth: { issuer, ...auth } } : { agents }));
  return startInProcess({ executor: 'subprocess', transport: 'ws', dataDir: dir, args: ['--config', config], env: issuer ? { TOOLGATE_BEARER_SECRET: '' } : {} });
}

describe('MCP over HTTP as an OAuth 2.1 protected resource, with oidc-provider as the authorization server', () => {
  let op: OidcProviderHandle;
  let stranger: OidcProviderHandle;
  let host: InProcessHost;
  let mcpUrl: string;

  before(async () => {
    op = await startOidcProvider({ accountId: 'alice' });
    stranger = await startOidcProvider({ accountId: 'alice' });
    host = await serveWithIssuer(op.issuer);
    mcpUrl = `http://127.0.0.1:${host.port}/mcp`;
  });

  /** Signatures of the access tokens the tests used: checked against the daemon's whole log once it has stopped. */
  const usedTokens: string[] = [];
  after(async () => {
    await host?.stop();
    await op?.close();
    await stranger?.close();
    for (const signature of usedTokens) assert.ok(!host.stderr().includes(signature), 'nothing of the token in the log');
  });

  test('a host with no token follows the 401 to the metadata and the provider, registers, authorizes and calls project_cli', async () => {
    // What the SDK will follow: the 401 names the metadata, the metadata names the resource and the issuer.
    const refused = await postInit(mcpUrl);
    assert.equal(refused.status, 401);
    const challenge = refused.headers.get('www-authenticate') ?? '';
    const pointer = /^Bearer resource_metadata="([^"]+)"/.exec(challenge);
    assert.ok(pointer, `a resource_metadata pointer in ${JSON.stringify(challenge)}`);
    assert.equal(pointer[1], `http://127.0.0.1:${host.port}/.well-known/oauth-protected-resource/mcp`);
    const metadata = (await (await fetch(pointer[1]!)).json()) as { resource: string; authorization_servers: string[] };
    assert.equal(metadata.resource, mcpUrl);
    assert.deepEqual(metadata.authorization_servers, [op.issuer]);

    const oauth = new InMemoryOAuthClientProvider((url, redirect) => op.authorize(url, redirect), {
      // scopes_supported is empty, and oidc-provider grants nothing to a request without a scope.
      scope: 'mcp',
    });
    const conn = await connectWithOAuth(mcpUrl, oauth);
    try {
      assert.equal(conn.authorized, true, 'the first connect was refused and the code flow ran');
      assert.ok(oauth.clientInformation()?.client_id, 'registered dynamically');
      const authz = oauth.authorizationUrls[0]!;
      assert.equal(authz.origin, op.issuer);
      assert.equal(authz.searchParams.get('resource'), mcpUrl);
      assert.equal(authz.searchParams.get('code_challenge_method'), 'S256');
      assert.deepEqual(op.interactions.slice(0, 2), ['login', 'consent']);
      const token = oauth.tokens()!.access_token;
      assert.equal(decodeProtectedHeader(token).typ, 'at+jwt');
      assert.deepEqual([decodeJwt(token).iss, decodeJwt(token).aud, decodeJwt(token).sub], [op.issuer, mcpUrl, 'alice']);

      const { tools } = await conn.client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['project_cli']);
      const created = (await conn.client.callTool({
        name: 'project_cli',
        arguments: { module: 'calendar', method: 'create', input: EVENT },
      })) as { isError?: boolean; content: Array<{ text: string }>; structuredContent: { status: string; data: { event: { owner_id: string } } } };
      assert.notEqual(created.isError, true, JSON.stringify(created));
      // An issuer's user is namespaced by its trust source (contract section 21).
      assert.equal(created.structuredContent.data.event.owner_id, 'oauth:alice');

      // The call is in alice's history, in the thread of this MCP session, with the text the model saw.
      const sessionId = conn.transport.sessionId;
      assert.ok(sessionId);
      const rows = await dbRows<{ content: string }>(
        host.dbPath,
        "SELECT content FROM messages WHERE user_id = ? AND thread_id = ? AND role = 'tool'",
        ['oauth:alice', `mcp-${sessionId}`],
      );
      assert.deepEqual(rows.map((r) => r.content), [created.content[0]!.text]);
    } finally {
      await conn.close();
    }
    usedTokens.push(oauth.tokens()!.access_token.split('.')[2]!);
  });

  test('a token of the provider for another audience → 401 invalid_token', async () => {
    const token = await op.mintAccessToken('http://127.0.0.1:1/another/mcp');
    usedTokens.push(token.split('.')[2]!);
    assert.equal(decodeJwt(token).aud, 'http://127.0.0.1:1/another/mcp');
    const res = await postInit(mcpUrl, token);
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata="[^"]+", error="invalid_token"/);
    // The same flow for this resource is accepted: only the audience differed.
    assert.equal((await postInit(mcpUrl, await op.mintAccessToken(mcpUrl))).status, 200);
  });

  test('a token for this resource from another issuer → 401 invalid_token', async () => {
    const token = await stranger.mintAccessToken(mcpUrl);
    usedTokens.push(token.split('.')[2]!);
    assert.deepEqual([decodeJwt(token).iss, decodeJwt(token).aud], [stranger.issuer, mcpUrl]);
    const res = await postInit(mcpUrl, token);
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  });

  test('a key the provider rotated in is picked up: a token with the new kid is accepted', async () => {
    // toolgate has the current key set cached (the cases above were accepted with it).
    const before = await op.mintAccessToken(mcpUrl);
    usedTokens.push(before.split('.')[2]!);
    assert.equal((await postInit(mcpUrl, before)).status, 200);
    const oldKid = op.kid();
    const newKid = await op.rotateKeys();
    assert.notEqual(newKid, oldKid);
    const rotated = await op.mintAccessToken(mcpUrl);
    usedTokens.push(rotated.split('.')[2]!);
    assert.equal(decodeProtectedHeader(rotated).kid, newKid);
    // The JWKS is fetched again on an unknown kid, after a cooldown of at most 5 s (contract section 11).
    await waitFor(async () => (await postInit(mcpUrl, rotated)).status === 200, 'the rotated key to be accepted', 15_000, 250);
    // The old key is still published: its tokens keep working until they expire.
    assert.equal((await postInit(mcpUrl, before)).status, 200);
  });
});

test('auth.scopes: advertised in the challenge and the metadata, so a host that asks nothing of its own requests that scope', async () => {
  const op = await startOidcProvider({ accountId: 'sam', resourceScopes: 'toolgate:mcp' });
  const host = await serveWithIssuer(op.issuer, { scopes: ['toolgate:mcp'] });
  const mcpUrl = `http://127.0.0.1:${host.port}/mcp`;
  try {
    const refused = await postInit(mcpUrl);
    assert.equal(refused.status, 401);
    assert.equal(
      refused.headers.get('www-authenticate'),
      `Bearer resource_metadata="http://127.0.0.1:${host.port}/.well-known/oauth-protected-resource/mcp", scope="toolgate:mcp"`,
    );
    const metadata = (await (await fetch(`http://127.0.0.1:${host.port}/.well-known/oauth-protected-resource/mcp`)).json()) as { scopes_supported: string[] };
    assert.deepEqual(metadata.scopes_supported, ['toolgate:mcp']);

    // No `scope` in the client's metadata: the SDK takes it from the challenge (MCP authorization 2025-11-25).
    const oauth = new InMemoryOAuthClientProvider((url, redirect) => op.authorize(url, redirect));
    const conn = await connectWithOAuth(mcpUrl, oauth);
    try {
      assert.equal(conn.authorized, true);
      // (The SDK adds offline_access itself: the client registered for refresh_token and the provider offers it.)
      const asked = oauth.authorizationUrls[0]!.searchParams.get('scope')?.split(' ') ?? [];
      assert.ok(asked.includes('toolgate:mcp'), `asked for ${asked.join(' ')}`);
      const token = oauth.tokens()!.access_token;
      assert.deepEqual([decodeJwt(token).aud, decodeJwt(token).sub], [mcpUrl, 'sam']);
      assert.ok(String(decodeJwt(token).scope).split(' ').includes('toolgate:mcp'), 'the provider granted the advertised scope');
      const { tools } = await conn.client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['project_cli']);
    } finally {
      await conn.close();
    }
    // A refused token's challenge still names the scope to ask for.
    const wrong = await postInit(mcpUrl, await op.mintAccessToken('http://127.0.0.1:1/another/mcp'));
    assert.match(wrong.headers.get('www-authenticate') ?? '', /, scope="toolgate:mcp", error="invalid_token"$/);
  } finally {
    await host.stop();
    await op.close();
  }
});

test('without auth.issuer there is no OAuth to follow: the same host cannot connect', async () => {
  const op = await startOidcProvider();
  const host = await serveWithIssuer(undefined);
  try {
    const oauth = new InMemoryOAuthClientProvider((url, redirect) => op.authorize(url, redirect), { scope: 'mcp' });
    await assert.rejects(connectWithOAuth(`http://127.0.0.1:${host.port}/mcp`, oauth));
    assert.equal(oauth.tokens(), undefined);
    assert.equal(op.interactions.length, 0, 'never sent to the provider');
  } finally {
    await host.stop();
    await op.close();
  }
});
