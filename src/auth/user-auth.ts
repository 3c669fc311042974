/**
 * The one way a user bearer token becomes a principal, whatever carries it:
 * `session/open` (a token in params), `/mcp`, the AG-UI stream (an
 * `Authorization` header) and `serve --mcp` (TOOLGATE_MCP_TOKEN).
 * `authenticateUser` checks the token's length and shape, verifies it with the
 * configured keys and policy (bearer-auth.ts) — or, for an access token of
 * `auth.issuer`, with that issuer's JWKS (protected-resource.ts) — and provisions its user from
 * the claims. The token is never echoed, logged or kept: one verified with the
 * daemon's own keys is remembered by its SHA-256 until its `exp`, because an MCP
 * host sends the same token with every request and `serve --mcp` checks its one
 * token on every call, and a verification costs ~200 µs of WebCrypto.
 */
import { createHash } from 'node:crypto';
import { identityOf, Unauthorized, verifyBearer, type BearerIdentity } from './bearer-auth.js';
import type { Store } from '../store/store.js';
import type { Logger } from '../runtime/logger.js';
import type { ProtectedResource } from './protected-resource.js';
import type { BearerKeySource } from './bearer-auth.js';
import { IssuerUnavailable } from './issuer-keys.js';
import { MAX_BEARER_TOKEN_LENGTH } from '../protocol/limits.js';

/** The longest bearer token accepted anywhere (declared once, in the protocol: `session/open`'s schema uses it too). */
const MAX_TOKEN_CHARS = MAX_BEARER_TOKEN_LENGTH;

/** A verified principal: the user, and when its token (so whatever it opened) stops being valid. */
export interface Principal {
  userId: string;
  /** The token's `exp` in milliseconds since the epoch. */
  expiresAt: number;
  identity: BearerIdentity;
}

/** What is authenticated: a token as such, or an HTTP `Authorization` header value. */
export type Credentials = { token: string } | { header: string | undefined };

export interface AuthenticateOptions {
  /**
   * `always` writes the user's claims on every call (`session/open`, where a
   * host expects a refresh); `when-changed` only when this daemon has not
   * written these very claims for this user already (per-request routes).
   */
  provision?: 'always' | 'when-changed';
  /** Where TOOLGATE_BEARER_ISSUER / _AUDIENCE are read (default: the daemon's environment). */
  env?: NodeJS.ProcessEnv;
  /** Log a refused token's reason (default true); false where the caller prints the reason itself. */
  logRefusal?: boolean;
}

/**
 * Why authentication failed: `missing` (no usable token), `invalid` (it does not verify) or `unavailable`
 * (the token may be fine but `auth.issuer`'s keys cannot be had now: answer "try again", 503, never a
 * refusal that tells a client to throw its token away).
 */
export class AuthError extends Unauthorized {
  constructor(
    readonly reason: 'missing' | 'invalid' | 'unavailable',
    message: string,
  ) {
    super(message);
  }
}

/**
 * The token of an `Authorization: Bearer <token>` header (the scheme in any
 * case, spaces around the token tolerated), or null when the header is
 * absent, of another scheme, holds more than one word or a token longer
 * than MAX_TOKEN_CHARS.
 */
function bearerOf(header: string | undefined): string | null {
  const m = header === undefined ? null : /^Bearer +([^\s]+) *$/i.exec(header);
  return m && m[1]!.length <= MAX_TOKEN_CHARS ? m[1]! : null;
}

/**
 * What verifying a user's token needs: the keys, the issuer, the token policy, and the store its user is
 * provisioned in. One object per daemon: the verdicts and provisioned claims it remembers are keyed by it.
 */
export interface UserAuthDeps {
  store: Pick<Store, 'transaction'>;
  log: Logger;
  env: NodeJS.ProcessEnv;
  /** `auth.max_token_lifetime_s`, read on every verification (a reload changes it). */
  config?: { auth?: { maxTokenLifetimeS?: number | undefined } };
  /** TOOLGATE_BEARER_SECRET / _JWKS (or the dev secret); null when only `auth.issuer` verifies tokens. */
  bearerKeys: BearerKeySource | null;
  /** `auth.issuer` set: its access tokens are accepted too. */
  oauth?: ProtectedResource | undefined;
}

/** Claims this daemon last wrote per user: provisioning is a write, not something to repeat on every request. */
const provisioned = new WeakMap<UserAuthDeps, Map<string, string>>();
const MAX_REMEMBERED_USERS = 10_000;

/**
 * Tokens verified with the daemon's own keys (the secret or the JWKS file, read once at start and never
 * changed while it runs), by the SHA-256 of the token, the issuer/audience checked and the lifetime limit
 * (a reload may change it); each until its `exp`. With fixed keys a token's verdict under one limit changes
 * only at `exp`, so memory answers exactly as verification would. An `auth.issuer` token is verified every time: its keys rotate, and a retired
 * key must stop working as soon as the JWKS no longer holds it.
 */
const verifiedTokens = new WeakMap<UserAuthDeps, Map<string, BearerIdentity>>();
const MAX_REMEMBERED_TOKENS = 4096;

/**
 * Verifies the credentials and provisions the user. Throws AuthError
 * (`missing` for an absent or malformed token, `invalid` for one that does
 * not verify — bad signature, expired, no `exp`, too long-lived, unusable
 * `sub` —, `unavailable` when `auth.issuer`'s keys cannot be fetched for it);
 * any other error is the store's.
 */
export async function authenticateUser(deps: UserAuthDeps, credentials: Credentials, opts: AuthenticateOptions = {}): Promise<Principal> {
  const token = 'token' in credentials ? credentials.token : bearerOf(credentials.header);
  if (!token || token.length > MAX_TOKEN_CHARS) throw new AuthError('missing', 'a user bearer token is required: Authorization: Bearer <token>');
  let identity: BearerIdentity;
  try {
    identity = await verifiedIdentity(deps, token, opts.env ?? deps.env);
  } catch (err) {
    // Which check failed, for the operator too (the message names no part of the token).
    if (err instanceof AuthError && err.reason === 'invalid' && opts.logRefusal !== false) deps.log.log('info', 'bearer token refused', { reason: err.message });
    throw err;
  }
  await provision(deps, identity, opts.provision ?? 'when-changed');
  return { userId: identity.userId, expiresAt: identity.expiresAt, identity };
}

/** The identity of a token that verifies (remembered for the daemon's own keys, see verifiedTokens), or AuthError. */
async function verifiedIdentity(deps: UserAuthDeps, token: string, env: NodeJS.ProcessEnv): Promise<BearerIdentity> {
  const policy = { maxLifetimeS: deps.config?.auth?.maxTokenLifetimeS };
  try {
    // An access token of `auth.issuer` goes to its JWKS; anything else to the secret / JWKS file.
    if (deps.oauth?.claims(token)) return identityOf(await deps.oauth.verify(token), policy, 'issuer');
    if (!deps.bearerKeys) throw new Unauthorized(`invalid bearer token: only access tokens of ${deps.oauth?.issuer ?? 'the configured issuer'} are accepted`);
    let remembered = verifiedTokens.get(deps);
    if (!remembered) verifiedTokens.set(deps, (remembered = new Map()));
    // The lifetime limit is part of the key: a reload that lowers `auth.max_token_lifetime_s` must refuse a token
    // remembered under the old one (and one that raises it, accept a token refused before).
    const key = createHash('sha256').update(`${env.TOOLGATE_BEARER_ISSUER ?? ''}\n${env.TOOLGATE_BEARER_AUDIENCE ?? ''}\n${policy.maxLifetimeS ?? ''}\n${token}`).digest('base64url');
    const hit = remembered.get(key);
    // jose's `exp` check: expired once the current second reaches `exp`.
    if (hit && Date.now() < hit.expiresAt) return hit;
    remembered.delete(key);
    const identity = await verifyBearer(token, deps.bearerKeys, env, policy);
    // A bound, not an eviction policy: forgetting a token only costs one more verification.
    if (remembered.size >= MAX_REMEMBERED_TOKENS) remembered.clear();
    remembered.set(key, identity);
    return identity;
  } catch (err) {
    if (err instanceof Unauthorized) throw new AuthError('invalid', err.message);
    if (err instanceof IssuerUnavailable) throw new AuthError('unavailable', err.message);
    throw err;
  }
}

async function provision(deps: UserAuthDeps, identity: BearerIdentity, mode: 'always' | 'when-changed'): Promise<void> {
  let written = provisioned.get(deps);
  if (!written) provisioned.set(deps, (written = new Map()));
  const claims = JSON.stringify([identity.name, identity.phone, identity.role]);
  if (mode === 'when-changed' && written.get(identity.userId) === claims) return;
  const { expiresAt: _exp, ...fields } = identity;
  await deps.store.transaction((tx) => tx.users.provision(identity.userId, fields));
  // A bound, not an eviction policy: forgetting a user only costs one more write.
  if (written.size >= MAX_REMEMBERED_USERS) written.clear();
  written.set(identity.userId, claims);
}
