/**
 * The operator's routes on the `--ws` server: `GET /healthz` (200 while the
 * process serves), `GET /readyz` (200 when the store answers and the daemon
 * is not draining, else 503), and `GET /metrics` (Prometheus text) when
 * metrics are enabled. They carry no user data, so they take no token.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestTarget } from '../rpc/request-target.js';

export interface OpsRouteDeps {
  /** Not draining and the store answers (telemetry/health.ts). */
  ready(): Promise<{ ready: boolean; reason?: string }>;
  /** The exposition, or undefined when `metrics.enabled` is off (then /metrics is 404). */
  scrape?: (() => Promise<{ contentType: string; body: string }>) | undefined;
  onError(err: unknown): void;
}

const PATHS = new Set(['/healthz', '/readyz', '/metrics']);

export function opsRoutes(deps: OpsRouteDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const path = requestTarget(req.url)?.pathname;
    if (!path || !PATHS.has(path) || (path === '/metrics' && !deps.scrape)) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'content-type': 'application/json', allow: 'GET, HEAD' }).end(JSON.stringify({ error: 'method not allowed' }));
      return true;
    }
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
    const answer = async () => {
      if (path === '/healthz') return json(200, { status: 'ok' });
      if (path === '/readyz') {
        const { ready, reason } = await deps.ready();
        return json(ready ? 200 : 503, ready ? { status: 'ready' } : { status: 'not ready', reason });
      }
      const { contentType, body } = await deps.scrape!();
      res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body);
    };
    answer().catch((err: unknown) => {
      deps.onError(err);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'internal error' }));
    });
    return true;
  };
}
