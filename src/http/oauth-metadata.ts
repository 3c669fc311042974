/**
 * RFC 9728 Protected Resource Metadata of `/mcp` (contract section 11), served
 * when `auth.issuer` is set: at `/.well-known/oauth-protected-resource/mcp`
 * (the path an MCP client derives from `/mcp`) and at
 * `/.well-known/oauth-protected-resource` (the host-wide fallback clients try
 * next). Without an issuer both are 404, as before. Host/Origin are checked
 * by the HTTP server first; CORS headers come from cors.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Services } from '../rpc/services.js';
import { RESOURCE_METADATA_PATH, RESOURCE_METADATA_ROOT_PATH } from '../auth/protected-resource.js';
import { requestTarget } from '../rpc/request-target.js';

export function resourceMetadataRoute(deps: Pick<Services, 'oauth'>): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const oauth = deps.oauth;
    if (!oauth) return false;
    const path = requestTarget(req.url)?.pathname;
    if (path !== RESOURCE_METADATA_PATH && path !== RESOURCE_METADATA_ROOT_PATH) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      req.resume();
      res.writeHead(405, { 'content-type': 'application/json', allow: 'GET, HEAD, OPTIONS' }).end(JSON.stringify({ error: 'method not allowed' }));
      return true;
    }
    const body = JSON.stringify(oauth.metadata());
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
}
