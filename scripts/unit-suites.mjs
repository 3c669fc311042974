// Every compiled unit suite (dist/test/unit/**/x.test.js whose source test/unit/**/x.test.ts exists),
// imported one after the other into ONE process: scripts/run-tests.mjs hands this file to the SQLite
// pass in place of the unit files, the way vscode-jsonrpc's mocha suites share a process.
//
// Why: a test file's own process costs ~0.85 s of CPU before its first test (Node's start and ~300
// modules of dist/src loaded again), and the unit suites are 86 small files — measured on this 2-core
// machine (2026-12-06), the unit files one process each took 112 s of CPU, all of them in one process
// 40 s, with the same 429 tests passing. Each suite's top-level tests register as it is imported and run
// in import order; a suite that fails to import fails this file.
//
// Run alone: `node --test scripts/unit-suites.mjs` (after `npm run build`).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = new URL('..', import.meta.url).pathname;

// The unit suites in name order: the compiled file of each test/unit/…/x.test.ts.
const suites = readdirSync(join(root, 'test', 'unit'), { recursive: true })
  .filter((f) => f.endsWith('.test.ts'))
  .sort()
  .map((f) => join(root, 'dist', 'test', 'unit', f.replace(/\.ts$/, '.js')))
  .filter((f) => existsSync(f));
for (const file of suites) await import(pathToFileURL(file).href);
