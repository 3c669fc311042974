import { readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PACKAGE_ROOT } from '../runtime/package-root.js';

/** The built inspector (scripts/bundle-inspector.mjs bundles src/inspector/ into it). */
const INSPECTOR_DIR = join(PACKAGE_ROOT, 'dist', 'inspector');
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
};

/** The inspector's files, read once: a fixed set of names, so no path from a request touches the disk. */
const FILES: Map<string, { body: Buffer; type: string }> = (() => {
  const files = new Map<string, { body: Buffer; type: string }>();
  try {
    for (const name of readdirSync(INSPECTOR_DIR)) {
      const type = TYPES[extname(name)];
      if (type) files.set(`/${name}`, { body: readFileSync(join(INSPECTOR_DIR, name)), type });
    }
  } catch {
    /* no inspector built: every path is 404 */
  }
  // Browsers ask for /favicon.ico whatever the page links: answer with the page's own icon.
  const icon = files.get('/favicon.svg');
  if (icon) files.set('/favicon.ico', icon);
  return files;
})();

export function serveInspectorFile(path: string, req: IncomingMessage, res: ServerResponse): boolean {
  const file = FILES.get(path === '/' ? '/index.html' : path);
  if (!file) return false;
  res.writeHead(200, {
    'content-type': file.type,
    'content-length': file.body.length,
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self'; script-src 'self'",
  });
  res.end(req.method === 'HEAD' ? undefined : file.body);
  return true;
}
