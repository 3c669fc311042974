/**
 * CORS for browser-based MCP clients (contract section 11): on `/mcp` and the
 * OAuth metadata, a request whose `Origin` passed the Host/Origin guard
 * (`http.allowed_origins`, http-guard.ts — a disallowed origin never gets
 * here, it is answered 403) is told it may read the answer, and which
 * headers it may see (`Mcp-Session-Id` to continue its session,
 * `WWW-Authenticate` to find the metadata). A preflight (`OPTIONS` with
 * `Access-Control-Request-Method`) is answered here, before authentication:
 * a browser sends it without the `Authorization` header it asks about.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestTarget } from '../rpc/request-target.js';

const ALLOW_METHODS = 'GET, POST, DELETE, OPTIONS';
const ALLOW_HEADERS = 'Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID';
const EXPOSE_HEADERS = 'Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate';
/** How long a browser may reuse a preflight answer, in seconds. */
const MAX_AGE_S = '600';

/** A route for `paths` that adds the CORS headers and answers preflights; it handles nothing else (returns false). */
export function corsRoute(paths: readonly string[]): (req: IncomingMessage, res: ServerResponse) => boolean {
  const covered = new Set(paths);
  return (req, res) => {
    const path = requestTarget(req.url)?.pathname;
    if (path === undefined || !covered.has(path)) return false;
    const origin = req.headers.origin;
    res.setHeader('vary', 'Origin');
    if (origin) {
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('access-control-expose-headers', EXPOSE_HEADERS);
    }
    if (req.method !== 'OPTIONS') return false;
    req.resume();
    if (origin && req.headers['access-control-request-method']) {
      res.setHeader('access-control-allow-methods', ALLOW_METHODS);
      res.setHeader('access-control-allow-headers', ALLOW_HEADERS);
      res.setHeader('access-control-max-age', MAX_AGE_S);
    }
    res.writeHead(204, { allow: ALLOW_METHODS }).end();
    return true;
  };
}
