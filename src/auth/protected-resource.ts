/**
 * toolgate as an OAuth 2.1 protected resource (contract section 11, the MCP
 * authorization spec): with `auth.issuer` set, access tokens of that
 * authorization server are accepted beside the HS256 secret / JWKS file.
 *
 * - the resource (`auth.audience`, default `<http.public_url>/mcp`) is what
 *   a token's `aud` must name (RFC 8707), and `iss` must be the issuer;
 * - the token is a JWT access token (`typ` `at+jwt`, RFC 9068, or `JWT`),
 *   signed with an asymmetric key of the issuer's JWKS (issuer-keys.ts), with
 *   an `exp`;
 * - the RFC 9728 metadata and the `WWW-Authenticate` challenge that points
 *   clients at it are built here, served by the HTTP routes.
 *
 * `http.public_url` defaults to the listening socket's `http://HOST:PORT`,
 * known only once `serve --ws` listens (`listening()`).
 */
import { decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { Unauthorized } from './bearer-auth.js';
import { ConfigError } from '../config/config-error.js';
import { IssuerUnavailable, issuerKeys } from './issuer-keys.js';
import type { Logger } from '../runtime/logger.js';

/** The paths of the RFC 9728 metadata: the resource's own (`/mcp` inserted) and the host-wide one. */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';
export const RESOURCE_METADATA_ROOT_PATH = '/.well-known/oauth-protected-resource';

const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
/** RFC 9068 `at+jwt` (with or without `application/`), or the generic `JWT` most providers put on access tokens. */
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'application/at+jwt', 'jwt']);

export interface ProtectedResourceConfig {
  issuer: string;
  audience?: string | undefined;
  jwksUrl?: string | undefined;
  /** `auth.scopes`: advertised, never enforced (a token's `scope` maps to nothing). */
  scopes?: string[] | undefined;
  publicUrl?: string | undefined;
}

/** RFC 9728 section 2. */
export interface ResourceMetadata {
  resource: string;
  authorization_servers: string[];
  bearer_methods_supported: ['header'];
  scopes_supported: string[];
}

export class ProtectedResource {
  readonly issuer: string;
  private publicUrl: string | undefined;
  private readonly keys: JWTVerifyGetKey;

  constructor(
    private readonly config: ProtectedResourceConfig,
    log: Logger,
  ) {
    this.issuer = config.issuer;
    this.publicUrl = config.publicUrl;
    this.keys = issuerKeys(config.issuer, config.jwksUrl, log);
  }

  /** `serve --ws` is listening: the default public URL is now known. */
  listening(host: string, port: number): void {
    if (this.config.publicUrl !== undefined) return;
    this.publicUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  }

  /** Whether the resource can be named yet (an explicit audience, or a known public URL). */
  get ready(): boolean {
    return this.config.audience !== undefined || this.publicUrl !== undefined;
  }

  /** The `aud` a token must carry, and the `resource` of the metadata. */
  get resource(): string {
    if (this.config.audience !== undefined) return this.config.audience;
    if (this.publicUrl === undefined) throw new ConfigError('auth.audience: set it, or http.public_url, when toolgate serves no HTTP port');
    return `${this.publicUrl}/mcp`;
  }

  /** Where the metadata is served, as clients reach it. */
  get metadataUrl(): string {
    return `${this.publicUrl ?? ''}${RESOURCE_METADATA_PATH}`;
  }

  metadata(): ResourceMetadata {
    return { resource: this.resource, authorization_servers: [this.issuer], bearer_methods_supported: ['header'], scopes_supported: [...(this.config.scopes ?? [])] };
  }

  /**
   * The `WWW-Authenticate` value of a 401: where the metadata is, the scopes to
   * ask for (MCP authorization 2025-11-25: a client uses this `scope` first,
   * `scopes_supported` only without it), and `invalid_token` when a token was
   * sent and refused. Scopes are RFC 6749 scope-tokens (no `"` or `\`), so the
   * quoted string needs no escaping.
   */
  challenge(reason: 'missing' | 'invalid'): string {
    const scopes = this.config.scopes ?? [];
    const base = `Bearer resource_metadata="${this.metadataUrl}"${scopes.length > 0 ? `, scope="${scopes.join(' ')}"` : ''}`;
    return reason === 'invalid' ? `${base}, error="invalid_token"` : base;
  }

  /** Whether the token says it is this issuer's (unverified: only picks the verifier; `verify` checks it). */
  claims(token: string): boolean {
    try {
      const alg = decodeProtectedHeader(token).alg;
      return typeof alg === 'string' && ASYMMETRIC.includes(alg) && decodeJwt(token).iss === this.issuer;
    } catch {
      return false;
    }
  }

  /**
   * Verifies an access token of the issuer; throws Unauthorized saying which check failed, never echoing the
   * token, or IssuerUnavailable when the token's key is not cached and the issuer's keys cannot be fetched now.
   */
  async verify(token: string): Promise<JWTPayload> {
    let verified;
    try {
      verified = await jwtVerify(token, this.keys, { issuer: this.issuer, audience: this.resource, algorithms: ASYMMETRIC, requiredClaims: ['exp'] });
    } catch (err) {
      // Not a verdict on the token: the caller answers "try again" (503), never invalid_token.
      if (err instanceof IssuerUnavailable) throw err;
      const claim = (err as { claim?: unknown }).claim;
      const code = (err as { code?: unknown }).code;
      if (code === 'ERR_JWT_EXPIRED') {
        const exp = (err as { payload?: JWTPayload }).payload?.exp;
        throw new Unauthorized(`access token expired${typeof exp === 'number' ? ` at ${new Date(exp * 1000).toISOString().replace('.000Z', 'Z')}` : ''}`);
      }
      if (typeof claim === 'string' && /^[a-z_]{1,20}$/.test(claim)) {
        const missing = (err as { reason?: unknown }).reason === 'missing';
        throw new Unauthorized(`access token refused: its "${claim}" claim ${missing ? 'is missing' : 'is not what this resource accepts'}`);
      }
      throw new Unauthorized('invalid or wrongly signed access token');
    }
    const typ = verified.protectedHeader.typ;
    if (typeof typ !== 'string' || !ACCESS_TOKEN_TYPES.has(typ.toLowerCase())) {
      throw new Unauthorized('access token refused: its typ is not at+jwt or JWT');
    }
    return verified.payload;
  }
}
