import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { LAZY_MCP_PATH } from '../../../src/mcp/mcp-http-lazy.js';
import { MCP_PATH } from '../../../src/mcp/mcp-http.js';
import { REPO_ROOT } from '../../helpers/repo.js';

test('the lazy MCP endpoint answers on the same path as the endpoint it loads', () => {
  assert.equal(LAZY_MCP_PATH, MCP_PATH);
});

test('loading the daemon does not load the MCP SDK (it is imported on first use)', () => {
  // A resolve hook reports every module URL resolved while the daemon's entry module loads.
  const hook = 'data:text/javascript,' + encodeURIComponent(
    'let port; export function initialize(d) { port = d.port; } ' +
    'export async function resolve(s, c, next) { const r = await next(s, c); port.postMessage(r.url); return r; }',
  );
  const probe = `
    import { register } from 'node:module';
    import { MessageChannel } from 'node:worker_threads';
    const seen = [];
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (u) => seen.push(u));
    port1.unref();
    register(${JSON.stringify(hook)}, { data: { port: port2 }, transferList: [port2] });
    await import(${JSON.stringify(`${REPO_ROOT}/dist/src/app/cli.js`)});
    // The hook posts each URL in resolve order over one port: once a later import's URL is in, every earlier one is.
    const barrier = 'data:text/javascript,export default 0';
    await import(barrier);
    port1.ref();
    await new Promise((r) => { const seenAll = () => seen.includes(barrier) && r(); port1.on('message', seenAll); seenAll(); });
    port1.unref();
    process.stdout.write(JSON.stringify({ total: seen.length, mcp: seen.filter((u) => u.includes('@modelcontextprotocol') || ['mcp-http.js', 'mcp-stdio.js', 'mcp-server.js'].some((f) => u.endsWith('/mcp/' + f))) }));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { cwd: REPO_ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
  assert.equal(r.status, 0, r.stderr);
  const { total, mcp } = JSON.parse(r.stdout) as { total: number; mcp: string[] };
  assert.ok(total > 20, `the hook saw the daemon's modules (${total})`);
  assert.deepEqual(mcp, []);
});
