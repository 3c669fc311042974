/**
 * The signing keys of an OAuth / OpenID authorization server (`auth.issuer`),
 * fetched over HTTP and cached: `auth.jwks_url`, or the `jwks_uri` its metadata
 * names — RFC 8414 `/.well-known/oauth-authorization-server` first, then
 * OpenID Connect Discovery `/.well-known/openid-configuration`, in the order
 * the MCP authorization spec tries them.
 *
 * The cache (contract sections 11 and 21):
 * - keys are fetched again after CACHE_MAX_AGE_MS, and on a token with an
 *   unknown `kid`; either way at most one fetch per COOLDOWN_MS, counted from
 *   the last attempt whether it succeeded or not, so tokens with made-up
 *   `kid`s cannot make the daemon hammer a live issuer or a dead one;
 * - a failure affects only the token that needed the fetch: while the issuer
 *   cannot be reached, a token whose key is cached keeps verifying (for up to
 *   STALE_IF_ERROR_MS past the cache's age), and a token whose key is not
 *   cached gets IssuerUnavailable (a 503, "try again"), never a verdict on
 *   the token itself;
 * - every metadata or JWKS document is read up to MAX_DOCUMENT_BYTES and
 *   refused beyond, without buffering it, within FETCH_TIMEOUT_MS.
 *
 * jose's `createRemoteJWKSet` counts its cooldown from the last *successful*
 * fetch and has no stale-if-error or size bound, so the cache is kept here
 * around jose's `createLocalJWKSet`, which does the key selection. Nothing of
 * a token is logged.
 */
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { isLoopbackHostname } from '../protocol/config.js';
import type { Logger } from '../runtime/logger.js';

/** Fetches of the JWKS are at least this far apart (contract section 11: an unknown `kid` refetches within at most 5 s). */
export const COOLDOWN_MS = 5_000;
/** Keys are fetched again after this long even when every `kid` is known (a revoked key stops working). */
export const CACHE_MAX_AGE_MS = 10 * 60_000;
/** Stale-if-error: while fetching fails, cached keys keep verifying this long past CACHE_MAX_AGE_MS. */
export const STALE_IF_ERROR_MS = 60 * 60_000;
/** One metadata or JWKS request may take this long. */
const FETCH_TIMEOUT_MS = 5_000;
/** The largest metadata or JWKS document read (contract section 21). */
const MAX_DOCUMENT_BYTES = 1024 * 1024;

/** The issuer's keys could not be had: the token may be fine, the daemon cannot tell. */
export class IssuerUnavailable extends Error {
  override name = 'IssuerUnavailable';
}

/** Where the metadata of `issuer` may be, in the order they are tried (RFC 8414 section 3.1, OIDC Discovery 4). */
function metadataUrls(issuer: string): string[] {
  const u = new URL(issuer);
  const path = u.pathname.replace(/\/+$/, '');
  const origin = u.origin;
  if (path === '') return [`${origin}/.well-known/oauth-authorization-server`, `${origin}/.well-known/openid-configuration`];
  return [
    `${origin}/.well-known/oauth-authorization-server${path}`,
    `${origin}/.well-known/openid-configuration${path}`,
    `${origin}${path}/.well-known/openid-configuration`,
  ];
}

/** https, or plain http on a loopback host only: keys fetched in the clear could be swapped on the way. */
function isSafeKeyUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHostname(u.hostname));
  } catch {
    return false;
  }
}

/** A JSON document of at most MAX_DOCUMENT_BYTES: a bigger one is refused as soon as it is known to be bigger. */
async function fetchJson(url: string, accept = 'application/json'): Promise<unknown> {
  const res = await fetch(url, { headers: { accept }, redirect: 'manual', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  const tooBig = new Error(`the document is larger than ${MAX_DOCUMENT_BYTES} bytes`);
  if (res.status !== 200 || Number(res.headers.get('content-length') ?? 0) > MAX_DOCUMENT_BYTES) {
    await res.body?.cancel();
    throw res.status !== 200 ? new Error(`HTTP ${res.status}`) : tooBig;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Leaving the loop (the throw) cancels the body: the rest is never read.
  for await (const chunk of res.body ?? []) {
    size += chunk.byteLength;
    if (size > MAX_DOCUMENT_BYTES) throw tooBig;
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

/** The issuer's `jwks_uri` from its metadata; the metadata must name the same issuer (RFC 8414 section 3.3). */
async function discoverJwksUrl(issuer: string): Promise<string> {
  const tried: string[] = [];
  for (const url of metadataUrls(issuer)) {
    let doc: unknown;
    try {
      doc = await fetchJson(url);
    } catch (err) {
      tried.push(`${url}: ${(err as Error).message}`);
      continue;
    }
    const meta = (doc ?? {}) as { issuer?: unknown; jwks_uri?: unknown };
    if (meta.issuer !== issuer) throw new IssuerUnavailable(`the metadata at ${url} names another issuer than auth.issuer`);
    if (typeof meta.jwks_uri !== 'string' || !isSafeKeyUrl(meta.jwks_uri)) {
      throw new IssuerUnavailable(`the metadata at ${url} has no usable jwks_uri (https, or http on loopback)`);
    }
    return meta.jwks_uri;
  }
  throw new IssuerUnavailable(`no authorization server metadata for auth.issuer (${tried.join('; ')})`);
}

export interface IssuerKeysOptions {
  /** The clock (tests move it past the cache's age). */
  now?: () => number;
}

/**
 * A jose key resolver for the issuer's tokens. The JWKS URL is discovered
 * on first use (and again after a failed fetch), so a daemon starts while its
 * issuer is down and recovers when it comes back. Throws IssuerUnavailable
 * when the token's key is not cached and cannot be fetched now; jose's
 * `ERR_JWKS_NO_MATCHING_KEY` when the issuer answered and has no such key.
 */
export function issuerKeys(issuer: string, jwksUrl: string | undefined, log: Logger, opts: IssuerKeysOptions = {}): JWTVerifyGetKey {
  const now = opts.now ?? Date.now;
  let url = jwksUrl;
  let local: JWTVerifyGetKey | undefined;
  let fetchedAt = -Infinity;
  let attemptedAt = -Infinity;
  let failing = false;
  let lastFailure = '';
  let pending: Promise<void> | undefined;

  const refresh = (): Promise<void> =>
    (pending ??= (async () => {
      attemptedAt = now();
      try {
        url ??= await discoverJwksUrl(issuer);
        local = createLocalJWKSet((await fetchJson(url, 'application/json, application/jwk-set+json')) as JSONWebKeySet);
        fetchedAt = now();
        failing = false;
        lastFailure = '';
      } catch (err) {
        failing = true;
        // A discovered URL may have moved: look it up again next time.
        if (jwksUrl === undefined) url = undefined;
        const why = err instanceof Error ? err.message : String(err);
        if (why !== lastFailure) {
          log.log('warn', "the issuer's signing keys could not be fetched: cached keys serve until they can", { issuer, err: why });
        }
        lastFailure = why;
      }
    })().finally(() => {
      pending = undefined;
    }));

  const unavailable = () => new IssuerUnavailable("the authorization server's signing keys are unavailable; try again shortly");
  const mayFetch = () => now() - attemptedAt >= COOLDOWN_MS;

  return async (header, token) => {
    if (now() - fetchedAt >= CACHE_MAX_AGE_MS && mayFetch()) await refresh();
    else if (!local && pending) await pending;
    if (!local || now() - fetchedAt >= CACHE_MAX_AGE_MS + STALE_IF_ERROR_MS) throw unavailable();
    try {
      return await local(header, token);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
      // An unknown kid: perhaps a rotated key. One fetch per cooldown, whoever asks.
      if (mayFetch()) await refresh();
      else if (pending) await pending;
      else if (!failing) throw err;
      if (failing) throw unavailable();
      return local(header, token);
    }
  };
}
