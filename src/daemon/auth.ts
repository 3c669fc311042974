/**
 * The one way a user bearer token becomes a principal, whatever carries it:
 * `session/open` (a token in params), `/mcp`, the AG-UI stream (an
 * `Authorization` header) and `serve --mcp` (TOOLGATE_MCP_TOKEN).
 * `authenticate` checks the token's length and shape, verifies it with the
 * configured keys and policy (bearer-auth.ts) — or, for an access token of
 * `auth.issuer`, with that issuer's JWKS (protected-resource.ts) — and provisions its user from
 * the claims. The token is never echoed, logged or kept.
 */
import { identityOf, Unauthorized, verifyBearer, type BearerIdentity } from './bearer-auth.js';
import type { Daemon } from './daemon.js';
import { MAX_BEARER_TOKEN_LENGTH } from '../protocol/limits.js';

/** The longest bearer token accepted anywhere (declared once, in the protocol: `session/open`'s schema uses it too). */
export const MAX_TOKEN_CHARS = MAX_BEARER_TOKEN_LENGTH;

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
}

/** Why authentication failed: `missing` (no usable token) or `invalid` (it does not verify). */
export class AuthError extends Unauthorized {
  constructor(
    readonly reason: 'missing' | 'invalid',
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
export function bearerOf(header: string | undefined): string | null {
  const m = header === undefined ? null : /^Bearer +([^\s]+) *$/i.exec(header);
  return m && m[1]!.length <= MAX_TOKEN_CHARS ? m[1]! : null;
}

/** Claims this daemon last wrote per user: provisioning is a write, not something to repeat on every request. */
const provisioned = new WeakMap<Daemon, Map<string, string>>();
const MAX_REMEMBERED_USERS = 10_000;

/**
 * Verifies the credentials and provisions the user. Throws AuthError
 * (`missing` for an absent or malformed token, `invalid` for one that does
 * not verify — bad signature, expired, no `exp`, too long-lived, unusable
 * `sub`); any other error is the store's.
 */
export async function authenticate(daemon: Daemon, credentials: Credentials, opts: AuthenticateOptions = {}): Promise<Principal> {
  const token = 'token' in credentials ? credentials.token : bearerOf(credentials.header);
  if (!token || token.length > MAX_TOKEN_CHARS) throw new AuthError('missing', 'a user bearer token is required: Authorization: Bearer <token>');
  let identity: BearerIdentity;
  const policy = { maxLifetimeS: daemon.config?.auth?.maxTokenLifetimeS };
  try {
    // An access token of `auth.issuer` goes to its JWKS; anything else to the secret / JWKS file.
    if (daemon.oauth?.claims(token)) identity = identityOf(await daemon.oauth.verify(token), policy);
    else if (daemon.bearerKeys) identity = await verifyBearer(token, daemon.bearerKeys, opts.env ?? daemon.env, policy);
    else throw new Unauthorized(`invalid bearer token: only access tokens of ${daemon.oauth?.issuer ?? 'the configured issuer'} are accepted`);
  } catch (err) {
    if (err instanceof Unauthorized) throw new AuthError('invalid', err.message);
    throw err;
  }
  await provision(daemon, identity, opts.provision ?? 'when-changed');
  return { userId: identity.userId, expiresAt: identity.expiresAt, identity };
}

async function provision(daemon: Daemon, identity: BearerIdentity, mode: 'always' | 'when-changed'): Promise<void> {
  let written = provisioned.get(daemon);
  if (!written) provisioned.set(daemon, (written = new Map()));
  const claims = JSON.stringify([identity.name, identity.phone, identity.role]);
  if (mode === 'when-changed' && written.get(identity.userId) === claims) return;
  const { expiresAt: _exp, ...fields } = identity;
  await daemon.store.transaction((tx) => tx.users.provision(identity.userId, fields));
  // A bound, not an eviction policy: forgetting a user only costs one more write.
  if (written.size >= MAX_REMEMBERED_USERS) written.clear();
  written.set(identity.userId, claims);
}
