/**
 * A real OAuth 2.1 / OpenID authorization server for the end-to-end tests:
 * `oidc-provider` (a certified OpenID provider) on a loopback ephemeral
 * port, configured the way an MCP host expects one (the MCP authorization
 * spec, 2025-11-25):
 *
 * - dynamic client registration (RFC 7591), public clients
 *   (`token_endpoint_auth_method: none`), PKCE S256 required for every
 *   client;
 * - resource indicators (RFC 8707): the access token's `aud` is the
 *   requested `resource`, and it is a JWT (RFC 9068, `typ: at+jwt`) signed
 *   with the provider's current key, whose public half is at `jwks_uri`;
 * - one account: whoever logs in is `accountId` (default "alice");
 * - login and consent need no browser: the interaction route answers a GET
 *   by finishing the prompt (login as the account, then consent to what was
 *   asked) and redirecting back, so a user agent that follows redirects and
 *   keeps cookies — `authorize()` here — gets the code at the redirect URI.
 *
 * `rotateKeys()` gives the provider a new signing key (a new `kid`), keeping
 * the issuer URL, its clients and sessions: a resource server that cached the
 * old JWKS meets an unknown `kid` and has to fetch it again.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { type Adapter, type AdapterPayload, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

export interface OidcProviderOptions {
  /** The `sub` of every token: the one account that logs in. */
  accountId?: string;
  /** The scopes every resource server has (and a token may carry). */
  resourceScopes?: string;
  /** Access token lifetime, seconds. */
  accessTokenTTL?: number;
}

export interface OidcProviderHandle {
  /** `http://127.0.0.1:PORT`, exactly as the provider's metadata says it. */
  issuer: string;
  /** The `kid` of the key tokens are signed with now. */
  kid(): string;
  /** A new signing key (new `kid`) in front of the old ones; resolves with the new `kid`. */
  rotateKeys(): Promise<string>;
  /**
   * Plays the user agent: follows `authorizationUrl` through login and consent,
   * keeping this provider's cookies, up to the redirect to `redirectPrefix`;
   * resolves with that redirect (it carries `code`, `state`, `iss` or an `error`).
   */
  authorize(authorizationUrl: URL | string, redirectPrefix: string): Promise<URL>;
  /**
   * The whole flow by plain HTTP, as any OAuth client would run it: register a
   * public client, authorize with PKCE S256 and `resource`, exchange the code
   * (with `resource` again). Resolves with the access token.
   */
  mintAccessToken(resource: string, scope?: string): Promise<string>;
  /** The interactions finished so far ("login", "consent"), in order. */
  interactions: string[];
  close(): Promise<void>;
}

async function signingKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'ES256', use: 'sig' };
}

/**
 * The provider's storage, one per handle (the built-in memory adapter is one
 * per process, and warns): it outlives `rotateKeys()`, which makes a new
 * Provider instance, so clients, grants and sessions carry over.
 */
function mapAdapterFactory(): (model: string) => Adapter {
  const rows = new Map<string, { payload: AdapterPayload; expiresAt: number }>();
  const byUid = new Map<string, string>();
  const byUserCode = new Map<string, string>();
  const byGrant = new Map<string, Set<string>>();
  const read = (key: string | undefined): AdapterPayload | undefined => {
    const row = key === undefined ? undefined : rows.get(key);
    if (!row) return undefined;
    if (row.expiresAt <= Date.now()) {
      rows.delete(key!);
      return undefined;
    }
    return row.payload;
  };
  return (model) => {
    const key = (id: string) => `${model}:${id}`;
    return {
      async upsert(id, payload, expiresIn) {
        rows.set(key(id), { payload, expiresAt: expiresIn === undefined ? Infinity : Date.now() + expiresIn * 1000 });
        if (payload.uid && model === 'Session') byUid.set(payload.uid, key(id));
        if (payload.userCode) byUserCode.set(payload.userCode, key(id));
        if (payload.grantId) byGrant.set(payload.grantId, (byGrant.get(payload.grantId) ?? new Set()).add(key(id)));
      },
      async find(id) {
        return read(key(id));
      },
      async findByUid(uid) {
        return read(byUid.get(uid));
      },
      async findByUserCode(userCode) {
        return read(byUserCode.get(userCode));
      },
      async consume(id) {
        const payload = read(key(id));
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        rows.delete(key(id));
      },
      async revokeByGrantId(grantId) {
        for (const k of byGrant.get(grantId) ?? []) rows.delete(k);
        byGrant.delete(grantId);
      },
    };
  };
}

/** Cookies by origin-wide name and path, as a browser keeps them for one host. */
class CookieJar {
  private readonly cookies = new Map<string, { name: string; value: string; path: string }>();

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';').map((s) => s.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      let path = '/';
      let expired = value === '';
      for (const attr of attrs) {
        const [k = '', v = ''] = attr.split('=');
        if (k.toLowerCase() === 'path') path = v;
        if (k.toLowerCase() === 'max-age' && Number(v) <= 0) expired = true;
        if (k.toLowerCase() === 'expires' && Date.parse(v) <= Date.now()) expired = true;
      }
      const key = `${name}\n${path}`;
      if (expired) this.cookies.delete(key);
      else this.cookies.set(key, { name, value, path });
    }
  }

  header(url: URL): string {
    return [...this.cookies.values()]
      .filter((c) => url.pathname === c.path || url.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }
}

export async function startOidcProvider(opts: OidcProviderOptions = {}): Promise<OidcProviderHandle> {
  const accountId = opts.accountId ?? 'alice';
  const resourceScopes = opts.resourceScopes ?? 'mcp';
  const cookieKeys = [randomBytes(32).toString('base64url')];
  const keys: JWK[] = [await signingKey()];
  const interactions: string[] = [];
  const adapter = mapAdapterFactory();

  let provider: Provider | undefined;
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => {
    if (!provider || !handler) {
      res.statusCode = 503;
      res.end();
      return;
    }
    if (req.method === 'GET' && /^\/interaction\/[^/?]+(\?|$)/.test(req.url ?? '')) {
      finishInteraction(provider, req, res).catch((err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      });
      return;
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  /** The user logs in as `accountId` and consents to everything the client asked for. */
  async function finishInteraction(p: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await p.interactionDetails(req, res);
    const { prompt, params, session } = details;
    if (prompt.name === 'login') {
      interactions.push('login');
      await p.interactionFinished(req, res, { login: { accountId } }, { mergeWithLastSubmission: false });
      return;
    }
    if (prompt.name !== 'consent' || !session) throw new Error(`unexpected prompt ${prompt.name}`);
    const grant = details.grantId
      ? await p.Grant.find(details.grantId)
      : new p.Grant({ accountId: session.accountId, clientId: String(params.client_id) });
    if (!grant) throw new Error('grant not found');
    const missing = prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    const grantId = await grant.save();
    interactions.push('consent');
    await p.interactionFinished(req, res, { consent: details.grantId ? {} : { grantId } }, { mergeWithLastSubmission: true });
  }

  function configuration(): Configuration {
    return {
      adapter,
      jwks: { keys: keys.map((k) => ({ ...k })) },
      cookies: { keys: cookieKeys },
      async findAccount(_ctx: KoaContextWithOIDC, id: string) {
        return { accountId: id, claims: async () => ({ sub: id }) };
      },
      clientDefaults: {
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        // Every key is ES256 (the default would be RS256).
        id_token_signed_response_alg: 'ES256',
      },
      // Resource scopes are ones the provider knows: a client may register with them (RFC 7591 `scope`).
      scopes: ['openid', 'offline_access', ...resourceScopes.split(' ')],
      pkce: { required: () => true },
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true },
        resourceIndicators: {
          enabled: true,
          // Every resource indicator names a resource server: the test decides which audience it asks for.
          getResourceServerInfo: async (_ctx, resourceIndicator) => ({
            scope: resourceScopes,
            audience: resourceIndicator,
            accessTokenFormat: 'jwt',
            accessTokenTTL: opts.accessTokenTTL ?? 300,
            jwt: { sign: { alg: 'ES256' } },
          }),
        },
      },
      ttl: {
        AccessToken: opts.accessTokenTTL ?? 300,
        AuthorizationCode: 60,
        Grant: 600,
        IdToken: 300,
        Interaction: 600,
        RefreshToken: 600,
        Session: 600,
      },
      // Quiet: the provider's errors reach the test as HTTP answers.
      renderError: async (ctx, out) => {
        ctx.type = 'json';
        ctx.body = out;
      },
    };
  }

  function install(): void {
    provider = new Provider(issuer, configuration());
    handler = provider.callback();
  }
  install();

  const jar = new CookieJar();
  async function authorize(authorizationUrl: URL | string, redirectPrefix: string): Promise<URL> {
    let url = new URL(authorizationUrl);
    for (let hop = 0; hop < 20; hop++) {
      if (url.href.startsWith(redirectPrefix)) return url;
      if (url.origin !== issuer) throw new Error(`the authorization flow left the provider for ${url.href}`);
      const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header(url) } });
      jar.store(res);
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !location) {
        throw new Error(`authorization stopped at ${url.pathname} with ${res.status}: ${await res.text()}`);
      }
      await res.body?.cancel();
      url = new URL(location, url);
    }
    throw new Error('too many redirects in the authorization flow');
  }

  async function json<T>(res: Response, what: string): Promise<T> {
    const body = (await res.json()) as T;
    if (!res.ok) throw new Error(`${what}: ${res.status} ${JSON.stringify(body)}`);
    return body;
  }

  async function mintAccessToken(resource: string, scope = resourceScopes): Promise<string> {
    const meta = await json<{ registration_endpoint: string; authorization_endpoint: string; token_endpoint: string }>(
      await fetch(`${issuer}/.well-known/openid-configuration`),
      'discovery',
    );
    const redirectUri = 'http://127.0.0.1:1/minted';
    const { client_id: clientId } = await json<{ client_id: string }>(
      await fetch(meta.registration_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          redirect_uris: [redirectUri],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code'],
          response_types: ['code'],
          scope,
        }),
      }),
      'registration',
    );
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(8).toString('base64url');
    const url = new URL(meta.authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope,
      resource,
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const callback = await authorize(url, redirectUri);
    const code = callback.searchParams.get('code');
    if (!code || callback.searchParams.get('state') !== state) throw new Error(`no code: ${callback.search}`);
    const tokens = await json<{ access_token: string }>(
      await fetch(meta.token_endpoint, {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier, resource }),
      }),
      'token',
    );
    return tokens.access_token;
  }

  return {
    issuer,
    interactions,
    kid: () => keys[0]!.kid!,
    async rotateKeys() {
      keys.unshift(await signingKey());
      install();
      return keys[0]!.kid!;
    },
    authorize,
    mintAccessToken,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
