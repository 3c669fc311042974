// The built inspector (dist/inspector/, bundled from the typed sources in src/inspector/) carries
// the daemon's own action list and error codes, evaluated from their source at build time — not
// copies — and nothing of the Node side.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACTION_NAMES } from '../../../src/cli-router/registry.js';
import { RpcErrorCode } from '../../../src/rpc/errors.js';
import { REPO_ROOT } from '../../helpers/repo.js';

const bundle = readFileSync(join(REPO_ROOT, 'dist', 'inspector', 'inspector.js'), 'utf8');

function constant(name: string): unknown {
  const m = new RegExp(`var ${name} = Object\\.freeze\\((.*)\\);`).exec(bundle);
  assert.ok(m, `${name} is in the bundle`);
  return JSON.parse(m[1]!);
}

test('the bundle holds the registry’s action list and the RPC error codes, as the source has them', () => {
  assert.deepEqual(constant('ACTION_NAMES'), [...ACTION_NAMES]);
  assert.deepEqual(constant('RpcErrorCode'), { ...RpcErrorCode });
});

test('the inspector is TypeScript only, and its bundle pulls in nothing of Node', () => {
  const sources = readdirSync(join(REPO_ROOT, 'src', 'inspector'));
  assert.deepEqual(sources.filter((f) => f.endsWith('.js')), []);
  for (const needle of ['better-sqlite3', 'node:', 'vscode-jsonrpc', 'require(']) assert.ok(!bundle.includes(needle), needle);
  assert.deepEqual(readdirSync(join(REPO_ROOT, 'dist', 'inspector')).sort(), ['favicon.svg', 'index.html', 'inspector.css', 'inspector.js', 'ui-renderer.js']);
});

test('the empty token box says how to get a token (toolgate dev-token), next to the field it describes', () => {
  const html = readFileSync(join(REPO_ROOT, 'dist', 'inspector', 'index.html'), 'utf8');
  const hint = /<p id="token-hint"[^>]*>([\s\S]*?)<\/p>/.exec(html);
  assert.ok(hint, 'a token hint');
  assert.match(hint[1]!.replace(/\s+/g, ' '), /toolgate dev-token --user alice/);
  assert.match(html, /aria-describedby="token-help token-hint"/);
});
