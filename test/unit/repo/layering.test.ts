/**
 * Dependencies point one way (issues 11 and 19): src/app → src/mcp | src/http → src/rpc →
 * src/daemon → src/telemetry | src/cli-router → src/codec | src/store → src/protocol (the
 * graph in README.md's "Where things are"). ESLint's no-restricted-imports says so per file
 * while editing; this test reads the imports itself, so the rule holds even if an eslint
 * ignore list grows again (src/inspector is not linted: only this test holds it). Only
 * src/rpc, src/mcp and src/http turn errors into JSON-RPC errors.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../../helpers/repo.js';

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return tsFiles(path);
    return d.name.endsWith('.ts') && !d.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every `from '…'` / `import('…')` specifier of a file, with the names it imports. */
function importsOf(text: string): Array<{ from: string; names: string }> {
  const found: Array<{ from: string; names: string }> = [];
  for (const m of text.matchAll(/(?:import|export)\s+(type\s+)?([^;]*?)\s+from\s+'([^']+)'/g)) found.push({ from: m[3]!, names: m[2]! });
  for (const m of text.matchAll(/import\(\s*'([^']+)'\s*\)/g)) found.push({ from: m[1]!, names: '*' });
  return found;
}

function violations(layer: string, rule: (imp: { from: string; names: string }) => string | null, skip: string[] = [], root = join(REPO_ROOT, 'src')): string[] {
  const out: string[] = [];
  for (const file of tsFiles(join(root, layer))) {
    const rel = relative(REPO_ROOT, file);
    if (skip.includes(rel)) continue;
    for (const imp of importsOf(readFileSync(file, 'utf8'))) {
      const why = rule(imp);
      if (why) out.push(`${rel}: ${imp.from}: ${why}`);
    }
  }
  return out;
}

const upward = (...dirs: string[]) => (imp: { from: string }) => {
  const dir = dirs.find((d) => new RegExp(`^(\\.\\./)+${d}/`).test(imp.from));
  return dir ? `imports src/${dir}, a layer above` : null;
};
const wireErrors = (imp: { from: string; names: string }) => {
  if (/^vscode-jsonrpc/.test(imp.from) && /\bResponseError\b/.test(imp.names)) return 'builds a JSON-RPC error (ResponseError): throw a DaemonError';
  if (/protocol\/(errors|index)\.js$/.test(imp.from) && /\bRpcErrorCode\b/.test(imp.names)) return 'knows JSON-RPC error codes: throw a DaemonError';
  return null;
};
const both = (...rules: Array<(imp: { from: string; names: string }) => string | null>) => (imp: { from: string; names: string }) =>
  rules.map((r) => r(imp)).find((v) => v !== null) ?? null;

/** The transports on top of JSON-RPC: nothing below them imports either. */
const TOP = ['app', 'mcp', 'http'];

test('no file in src/daemon imports a transport or src/app, nor builds JSON-RPC errors', () => {
  assert.deepEqual(violations('daemon', both(upward(...TOP, 'rpc'), wireErrors)), []);
});

test('src/calls (a call\'s lifecycle, beside the daemon) imports no transport or src/app, nor builds JSON-RPC errors', () => {
  assert.deepEqual(violations('calls', both(upward(...TOP, 'rpc'), wireErrors)), []);
});

test('the layers below the daemon import nothing above them and know no JSON-RPC error', () => {
  assert.deepEqual(violations('store', both(upward(...TOP, 'rpc', 'daemon', 'cli-router', 'telemetry'), wireErrors)), []);
  assert.deepEqual(violations('codec', both(upward(...TOP, 'rpc', 'daemon', 'cli-router', 'store', 'telemetry'), wireErrors)), []);
  assert.deepEqual(violations('cli-router', both(upward(...TOP, 'rpc', 'daemon', 'telemetry'), wireErrors)), []);
  assert.deepEqual(violations('protocol', (imp) => (imp.from.startsWith('..') ? 'src/protocol is the bottom layer' : null)), []);
});

test('src/telemetry sits below the daemon: it imports neither the runtime, the transports nor the composition root', () => {
  assert.deepEqual(violations('telemetry', both(upward(...TOP, 'rpc', 'daemon'), wireErrors)), []);
});

test('src/rpc is JSON-RPC alone: it imports neither MCP, the HTTP routes nor the composition root', () => {
  assert.deepEqual(violations('rpc', upward(...TOP)), []);
});

test('MCP and the HTTP routes stand side by side on src/rpc: neither imports the other or the composition root', () => {
  assert.deepEqual(violations('mcp', upward('app', 'http')), []);
  assert.deepEqual(violations('http', upward('app', 'mcp')), []);
});

test('the inspector imports only src/protocol and src/client (never the daemon, the store or the CLI router)', () => {
  const only = (imp: { from: string }) => (imp.from.startsWith('.') && !/^\.\/|^\.\.\/(protocol|client)\//.test(imp.from) ? 'the inspector imports only src/protocol and src/client' : null);
  assert.deepEqual(violations('inspector', only), []);
});

test('the client and the example hosts stand on the public protocol alone, never on the daemon', () => {
  const only = (allowed: RegExp, what: string) => (imp: { from: string }) => (imp.from.startsWith('.') && !allowed.test(imp.from) ? what : null);
  assert.deepEqual(violations('client', only(/^\.\/|^\.\.\/protocol\//, 'the client imports only src/protocol')), []);
  assert.deepEqual(violations('.', only(/^\.\/|^\.\.\/\.\.\/src\/(client|protocol)\//, 'an example host imports only src/client and src/protocol'), [], join(REPO_ROOT, 'examples')), []);
});

test('the scan sees imports (a probe of each kind is caught)', () => {
  assert.ok(upward('rpc')({ from: '../rpc/errors.js' }));
  assert.ok(upward(...TOP)({ from: '../mcp/mcp-server.js' }));
  assert.ok(upward(...TOP)({ from: '../../http/http-server.js' }));
  assert.equal(upward(...TOP)({ from: '../rpc/errors.js' }), null);
  assert.ok(wireErrors({ from: 'vscode-jsonrpc', names: '{ ResponseError }' }));
  assert.ok(wireErrors({ from: '../protocol/errors.js', names: '{ RpcErrorCode }' }));
  assert.equal(importsOf("import { a } from '../rpc/x.js';\nconst m = await import('../app/y.js');").length, 2);
});
