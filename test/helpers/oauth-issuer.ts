/**
 * A stand-in OAuth authorization server on loopback, for tests of toolgate
 * as a protected resource: it serves RFC 8414 metadata (or only OpenID
 * discovery metadata), a JWKS of jose-generated keys, and mints access
 * tokens with them. `rotate()` replaces the signing key with one of a new
 * `kid`; `failJwks` makes the JWKS answer 500; `jwksFetches` counts fetches.
 */
import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export interface TestIssuerOptions {
  /** Which metadata document is served: RFC 8414 (`oauth`, default) or only OpenID discovery (`oidc`). */
  discovery?: 'oauth' | 'oidc';
  /** A path after the origin, e.g. `/realms/test` (as Keycloak's issuers have). */
  path?: string;
}

export interface MintOptions {
  aud?: string | string[];
  iss?: string;
  /** Seconds since the epoch, or a jose time span ("1h"). */
  exp?: number | string;
  typ?: string | null;
  claims?: Record<string, unknown>;
  /** Sign with a key the JWKS does not publish. */
  foreignKey?: boolean;
}

export interface TestIssuer {
  /** The issuer identifier (`iss`), e.g. `http://127.0.0.1:PORT` (+ path). */
  issuer: string;
  jwksUrl: string;
  /** The current signing key's kid. */
  kid(): string;
  mint(sub: string, opts?: MintOptions): Promise<string>;
  /** A new signing key with a new kid; the JWKS then publishes only it (or both with `keepOld`). */
  rotate(keepOld?: boolean): Promise<void>;
  failJwks: boolean;
  jwksFetches: number;
  metadataFetches: string[];
  close(): Promise<void>;
}

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

let counter = 0;
async function newKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = `key-${++counter}-${Date.now().toString(36)}`;
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

export async function startTestIssuer(opts: TestIssuerOptions = {}): Promise<TestIssuer> {
  const path = (opts.path ?? '').replace(/\/+$/, '');
  let keys: SigningKey[] = [await newKey()];
  const foreign = await newKey();
  let issuer = '';
  const server: Server = createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0]!;
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const meta = { issuer, jwks_uri: `${issuer}/jwks`, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, response_types_supported: ['code'] };
    if (url === `${path}/jwks`) {
      state.jwksFetches += 1;
      if (state.failJwks) return json(500, { error: 'down' });
      return json(200, { keys: keys.map((k) => k.publicJwk) });
    }
    if (opts.discovery !== 'oidc' && url === `/.well-known/oauth-authorization-server${path}`) {
      state.metadataFetches.push(url);
      return json(200, meta);
    }
    if (url === `${path}/.well-known/openid-configuration` || url === `/.well-known/openid-configuration${path}`) {
      state.metadataFetches.push(url);
      return json(200, { ...meta, subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['ES256'] });
    }
    state.metadataFetches.push(url);
    json(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  issuer = `http://127.0.0.1:${port}${path}`;
  const state: TestIssuer = {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    kid: () => keys.at(-1)!.kid,
    async mint(sub, m = {}) {
      const key = m.foreignKey ? foreign : keys.at(-1)!;
      const header: { alg: string; kid: string; typ?: string } = { alg: 'ES256', kid: key.kid };
      if (m.typ !== null) header.typ = m.typ ?? 'at+jwt';
      const jwt = new SignJWT({ scope: 'openid', ...m.claims })
        .setProtectedHeader(header)
        .setSubject(sub)
        .setIssuer(m.iss ?? issuer)
        .setIssuedAt()
        .setExpirationTime(m.exp ?? '10m');
      if (m.aud !== undefined) jwt.setAudience(m.aud);
      return jwt.sign(key.privateKey);
    },
    async rotate(keepOld = false) {
      const next = await newKey();
      keys = keepOld ? [...keys, next] : [next];
    },
    failJwks: false,
    jwksFetches: 0,
    metadataFetches: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return state;
}
