/**
 * Dependencies point one way (issues 11, 19 and 37): the layers below, from the top —
 *   src/app → src/mcp | src/http (side by side) → src/rpc → src/calls → src/threads →
 *   src/sessions → src/auth → src/config → src/runtime → src/telemetry → src/cli-router →
 *   src/codec | src/store (side by side) → src/protocol
 * (the graph in README.md's "Where things are"). A file imports its own folder or a folder
 * below it, never one above or beside it. ESLint's no-restricted-imports says so per file while
 * editing; this test reads the imports itself, so the rule holds even if an eslint ignore list
 * grows again (src/inspector is not linted: only this test holds it). Only src/rpc, src/mcp
 * and src/http turn errors into JSON-RPC errors. And no file reaches itself again through its
 * imports: the whole src graph has no circle.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
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

/**
 * The layers, top first; a group of several stands side by side (neither imports the other).
 * A folder of src that is missing here fails the last test below: a new folder takes its place first.
 */
const LAYERS: string[][] = [
  ['app'],
  ['mcp', 'http'],
  ['rpc'],
  ['calls'],
  ['threads'],
  ['sessions'],
  ['auth'],
  ['config'],
  ['runtime'],
  ['telemetry'],
  ['cli-router'],
  ['codec', 'store'],
  ['protocol'],
];
/** Folders beside the layers, each standing on src/protocol (and src/client) alone: tested below. */
const APART = ['inspector', 'client', 'conformance'];

/** Everything a folder must not import: the layers above it and the folders beside it. */
function above(dir: string): string[] {
  const at = LAYERS.findIndex((group) => group.includes(dir));
  // The composition root alone starts the conformance runner (`toolgate conformance`).
  return [...LAYERS.slice(0, at).flat(), ...LAYERS[at]!.filter((d) => d !== dir), ...APART.filter((d) => dir !== 'app' || d !== 'conformance')];
}
/** The runtime below the transports: it throws DaemonErrors, never JSON-RPC errors. */
const BELOW_RPC = LAYERS.slice(LAYERS.findIndex((g) => g.includes('rpc')) + 1).flat();

for (const dir of LAYERS.flat()) {
  const rule = BELOW_RPC.includes(dir) ? both(upward(...above(dir)), wireErrors) : upward(...above(dir));
  test(`src/${dir} imports only its own folder and the layers below it${BELOW_RPC.includes(dir) ? ', and builds no JSON-RPC error' : ''}`, () => {
    assert.deepEqual(violations(dir, rule), []);
  });
}

test('every folder of src has its place in the layers', () => {
  const folders = readdirSync(join(REPO_ROOT, 'src'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  assert.deepEqual(folders.filter((f) => !LAYERS.flat().includes(f) && !APART.includes(f)), []);
});

/** The import graph of src: file → the src files it imports (`typeOnly`: also `import type`, erased by tsc). */
function importGraph(opts: { typeOnly: boolean; dynamic: boolean }): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of tsFiles(join(REPO_ROOT, 'src'))) {
    const text = readFileSync(file, 'utf8');
    const to: string[] = [];
    for (const m of text.matchAll(/(?:import|export)\s+(type\s+)?[^;]*?\s+from\s+'(\.[^']+)'/g)) {
      if (m[1] && !opts.typeOnly) continue;
      to.push(resolve(dirname(file), m[2]!.replace(/\.js$/, '.ts')));
    }
    if (opts.dynamic) for (const m of text.matchAll(/import\(\s*'(\.[^']+)'\s*\)/g)) to.push(resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')));
    graph.set(file, to);
  }
  return graph;
}

/** The circles of a graph: its strongly connected components of more than one file. */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(relative(REPO_ROOT, w));
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('no import circle in src: no module is loaded again through its own imports', () => {
  assert.deepEqual(circles(importGraph({ typeOnly: false, dynamic: true })), []);
});

test('no import circle in the runtime even counting type imports (the executors, the call path, the services)', () => {
  // Type-only circles remain inside src/protocol (the action table and its data shapes) and src/store/pg
  // (the notifier's row type); a type circle anywhere else fails here.
  const runtime = /^src\/(?!protocol\/|store\/)/;
  assert.deepEqual(circles(importGraph({ typeOnly: true, dynamic: false })).filter((c) => c.some((f) => runtime.test(f))), []);
});

test('the circle check sees a circle (a probe)', () => {
  const a = join(REPO_ROOT, 'src/a.ts');
  const b = join(REPO_ROOT, 'src/b.ts');
  assert.equal(circles(new Map([[a, [b]], [b, [a]]])).length, 1);
  assert.equal(circles(new Map([[a, [b]], [b, []]])).length, 0);
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
  assert.ok(upward(...above('rpc'))({ from: '../mcp/mcp-server.js' }));
  assert.ok(upward(...above('calls'))({ from: '../../http/http-server.js' }));
  assert.ok(upward(...above('mcp'))({ from: '../http/http-server.js' }), 'side by side');
  assert.equal(upward(...above('mcp'))({ from: '../rpc/errors.js' }), null);
  assert.ok(upward(...above('threads'))({ from: '../calls/call.js' }));
  assert.equal(upward(...above('calls'))({ from: '../threads/history.js' }), null);
  assert.ok(wireErrors({ from: 'vscode-jsonrpc', names: '{ ResponseError }' }));
  assert.ok(wireErrors({ from: '../protocol/errors.js', names: '{ RpcErrorCode }' }));
  assert.equal(importsOf("import { a } from '../rpc/x.js';\nconst m = await import('../app/y.js');").length, 2);
});
