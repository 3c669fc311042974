/**
 * DNS rebinding and cross-site requests (contract section 8): every HTTP
 * route and every WebSocket upgrade on the `--ws` port checks `Host` and
 * `Origin` against `http.allowed_hosts` / `http.allowed_origins` (loopback
 * by default) — 403, an upgrade refused before it completes — while
 * loopback clients, and the names a config allows, go on working.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { openSession } from '../../helpers/host.js';
import { startInProcess } from '../../helpers/in-process.js';
import { tempDir } from '../../helpers/repo.js';
import { mintBearer } from '../../helpers/tokens.js';
import { httpGuard, loggedGuard } from '../../../src/rpc/http-guard.js';

const EVIL_HOST = 'evil.example';
const EVIL_ORIGIN = 'http://evil.example';

/** One HTTP request with exactly these headers; resolves with the status and body. */
function raw(port: number, path: string, headers: Record<string, string>, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
        // An SSE stream that was accepted never ends by itself: its status is the answer.
        if (res.statusCode === 200 && res.headers['content-type']?.startsWith('text/event-stream')) req.destroy();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('close', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end();
  });
}

/** A WebSocket upgrade; resolves with 101 when it completes, else the HTTP status it was refused with. */
function upgrade(port: number, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, { headers });
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    ws.on('error', () => resolve(0));
  });
}

test('a foreign Host or Origin is 403 on every route and upgrade; loopback clients pass', { timeout: 60_000 }, async () => {
  const host = await startInProcess({ executor: 'subprocess', transport: 'ws' });
  const port = host.port!;
  try {
    const token = await mintBearer('mia');
    // A thread of mia's, so the AG-UI stream has something to serve.
    const s = await openSession(host, token);
    await host.request('message/append', { session_id: s.session_id, thread_id: 'room', role: 'user', content: 'hi' });
    const auth = { authorization: `Bearer ${token}` };
    const routes = ['/', '/index.html', '/inspector.js', '/threads/room/events', '/mcp', '/nowhere'];
    for (const path of routes) {
      const rebound = await raw(port, path, { host: `${EVIL_HOST}:${port}`, ...auth });
      assert.equal(rebound.status, 403, `Host ${EVIL_HOST} on ${path}`);
      assert.ok(!rebound.body.includes(EVIL_HOST) && !rebound.body.includes(token), 'the refusal echoes nothing');
      const crossSite = await raw(port, path, { host: `127.0.0.1:${port}`, origin: EVIL_ORIGIN, ...auth });
      assert.equal(crossSite.status, 403, `Origin ${EVIL_ORIGIN} on ${path}`);
    }
    for (const path of ['/rpc', '/']) {
      assert.equal(await upgrade(port, path, { host: EVIL_HOST }), 403, `upgrade at ${path} with Host ${EVIL_HOST}`);
      assert.equal(await upgrade(port, path, { origin: EVIL_ORIGIN }), 403, `upgrade at ${path} with Origin ${EVIL_ORIGIN}`);
      assert.equal(await upgrade(port, path, { origin: `http://127.0.0.1:${port}` }), 101, `a loopback page may open ${path}`);
      assert.equal(await upgrade(port, path, { origin: `http://localhost:${port}` }), 101);
      assert.equal(await upgrade(port, path, {}), 101, 'a client without Origin (not a browser) passes');
    }
    // Loopback, with and without Origin: every route serves as before.
    const loopback: Array<Record<string, string>> = [{ host: `127.0.0.1:${port}` }, { host: `localhost:${port}`, origin: `http://localhost:${port}` }, { host: `[::1]:${port}` }];
    for (const headers of loopback) {
      assert.equal((await raw(port, '/', headers)).status, 200);
      assert.equal((await raw(port, '/threads/room/events', { ...headers, ...auth })).status, 200);
    }
    assert.doesNotMatch(host.stderr(), /"level":"error"/);
  } finally {
    await host.stop();
  }
});

test('http.allowed_hosts / allowed_origins name what is accepted, on every route and upgrade', { timeout: 60_000 }, async () => {
  const dir = tempDir();
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({
    agents: { default: { enabled_skills: ['calendar'], allowed_actions: ['calendar.read'] } },
    http: { allowed_hosts: ['127.0.0.1', 'tools.example.com'], allowed_origins: ['https://app.example.com'] } }));
  const host = await startInProcess({ executor: 'subprocess', transport: 'ws', dataDir: dir, args: ['--config', config] });
  const port = host.port!;
  try {
    const ok = { host: 'tools.example.com', origin: 'https://app.example.com' };
    assert.equal((await raw(port, '/', ok)).status, 200);
    assert.equal(await upgrade(port, '/rpc', ok), 101);
    assert.equal((await raw(port, '/', { host: 'tools.example.com', origin: 'http://localhost' })).status, 403, 'loopback origins are no longer implied');
    assert.equal((await raw(port, '/', { host: `localhost:${port}` })).status, 403, 'nor loopback hosts not listed');
    assert.equal(await upgrade(port, '/rpc', { host: `localhost:${port}` }), 403);
    assert.equal(await upgrade(port, '/rpc', { host: 'tools.example.com', origin: EVIL_ORIGIN }), 403);
  } finally {
    await host.stop();
  }
});

test('a refused Host that carries a bearer token logs no part of it', async () => {
  const token = await mintBearer('host-leak', { phone: '+15550100', name: 'A Person With A Long Name' });
  const lines: Array<Record<string, unknown>> = [];
  const guard = loggedGuard(httpGuard(), (msg, fields) => lines.push({ msg, ...fields }));
  const refused = guard({ headers: { host: token } } as unknown as IncomingMessage);
  assert.equal(refused, 'this Host is not allowed (http.allowed_hosts)');
  assert.equal(lines.length, 1, 'the refusal is logged');
  const logged = JSON.stringify(lines);
  const [header, payload, signature] = token.split('.') as [string, string, string];
  for (const part of [payload, signature, payload.slice(0, 24)]) {
    assert.ok(!logged.includes(part) && !logged.toLowerCase().includes(part.toLowerCase()), `the log line holds no part of the token: ${logged}`);
  }
  assert.ok(!logged.includes(`${header}.`), logged);
});
