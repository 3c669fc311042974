/**
 * DNS-rebinding and cross-site protection for everything on the `--ws`
 * port: every HTTP request (inspector files, the AG-UI stream, `/mcp`, 404s)
 * and every WebSocket upgrade (`/rpc`, `/`) must carry an allowed `Host`,
 * and an allowed `Origin` when it carries one (`http.allowed_hosts`,
 * `http.allowed_origins`; loopback by default). Otherwise a web page the
 * user visits could open `/rpc` or read a stream through a rebound name.
 *
 * The rules are the MCP SDK's (its Node guards, which `/mcp` used alone
 * before): host names compare port-agnostic; a request without `Origin`
 * (every non-browser client) passes; an `Origin` that is not a URL, or the
 * opaque `null`, is refused; a `scheme://*` entry allows every origin of
 * a non-web scheme (browser extensions). Written here rather than imported:
 * the SDK costs ~27 MB of memory that a daemon not serving MCP does not pay
 * (mcp-http-lazy.ts). Refusals never echo what the client sent.
 */
import type { IncomingMessage } from 'node:http';
import { maskSecrets } from '../codec/secret-scan.js';

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

export interface HttpGuardConfig {
  /** Host header names accepted (port-agnostic); unset → loopback only. */
  allowedHosts?: readonly string[] | undefined;
  /** Origins accepted (host names, full origins, or `scheme://*`); unset → loopback only. */
  allowedOrigins?: readonly string[] | undefined;
}

/** Why a request is refused (403), or null when it may proceed. */
export type HttpGuard = (req: IncomingMessage) => string | null;

/** A config entry as the guards compare it: a bare host name (IPv6 in brackets), without scheme or port. */
export function hostnameOf(entry: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\/\*$/i.test(entry)) return entry; // `moz-extension://*`: any origin of that scheme
  if (!entry.includes('://') && !entry.startsWith('[') && entry.split(':').length > 2) return `[${entry}]`; // a bare IPv6 address
  try {
    if (entry.includes('://')) return new URL(entry).hostname;
    return new URL(`http://${entry}`).hostname;
  } catch {
    return entry;
  }
}

export function httpGuard(config: HttpGuardConfig = {}): HttpGuard {
  const hosts = new Set((config.allowedHosts ?? LOOPBACK).map(hostnameOf));
  const origins = new Set((config.allowedOrigins ?? LOOPBACK).map(hostnameOf));
  return (req) => {
    const host = req.headers.host;
    if (!host) return 'a Host header is required';
    if (!hosts.has(hostnameIn(`http://${host}`) ?? '')) return 'this Host is not allowed (http.allowed_hosts)';
    const origin = req.headers.origin;
    if (origin === undefined || origin === '') return null;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return 'the Origin header is not an origin';
    }
    if (url.hostname === '') return 'the Origin header is not an origin';
    const web = url.protocol === 'http:' || url.protocol === 'https:';
    if ((!web && origins.has(`${url.protocol}//*`)) || origins.has(url.hostname)) return null;
    return 'this Origin is not allowed (http.allowed_origins)';
  };
}

function hostnameIn(url: string): string | null {
  try {
    return new URL(url).hostname;
  } catch {
    return null;
  }
}

/** Distinct refusals logged at most: a client that cycles Host values cannot fill the log. */
const MAX_LOGGED_REFUSALS = 32;

/**
 * The guard, saying why it refuses in the daemon's log: the first request
 * refused for each reason and Host says so in one warn line naming the
 * setting to change (a daemon started with `--host 0.0.0.0` and reached by
 * its LAN address otherwise answered 403 with nothing logged). Later
 * refusals of the same kind are not logged again; the Host is shown
 * cut to 100 printable characters (a token in it masked first), the Origin never.
 */
export function loggedGuard(guard: HttpGuard, warn: (msg: string, fields: Record<string, unknown>) => void): HttpGuard {
  const seen = new Set<string>();
  return (req) => {
    const refused = guard(req);
    if (refused && seen.size < MAX_LOGGED_REFUSALS) {
      // Tokens masked before the cut: a token cut short is no longer one the log's redaction recognizes.
      const host = maskSecrets(String(req.headers.host ?? '')).replace(/[^\x20-\x7e]/g, '?').slice(0, 100);
      const key = `${refused}\u0000${host}`;
      if (!seen.has(key)) {
        seen.add(key);
        const fix = refused.includes('allowed_hosts')
          ? `add ${JSON.stringify(hostnameIn(`http://${host}`) ?? host)} to http.allowed_hosts in the config to accept it`
          : refused.includes('allowed_origins')
            ? 'add the page\'s origin to http.allowed_origins in the config to accept it'
            : 'the client must send a Host header (and a URL as Origin)';
        warn('http request refused (403)', { reason: refused, host, fix });
      }
    }
    return refused;
  };
}
