// Bundles project-cli into one CommonJS file plus a V8 code cache for it.
// Measured reason (bench/RESULTS.md, docs/protocols/tool-protocol.md, "Why `project-cli` is bundled"):
// each subprocess tool call starts a fresh Node, so every millisecond of
// start-up is paid per call.
//  - One file instead of ~200 small ESM files (zod, jose, our modules).
//  - zod's 40 locales (357 KB of the 824 KB bundle) are replaced by English,
//    the one zod configures by default and the only one the CLI uses.
//  - CommonJS, so the launcher can compile it with `vm.Script` and V8's code
//    cache (Node 20 has no `module.enableCompileCache`): no parse, no lazy
//    compile of the functions the start-up runs.
//  - zod runs without its JIT (set by bin/project-cli.cjs).
//  - better-sqlite3's JavaScript is bundled too; its native addon is loaded by
//    a path fixed at build time instead of through `bindings`, which searches
//    a dozen candidate folders and walks a stack trace on every start.
import { build } from 'esbuild';
import { zodEnglishOnly } from './zod-english-only.mjs';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
// Compiled by `tsc` before this script runs (npm run build).
const { snapshotFacts, snapshotCheckPath } = await import(`${root}dist/src/calls/cli-snapshot-check.js`);
const { SNAPSHOT_LAUNCH_ENV } = await import(`${root}dist/src/calls/cli-launch.js`);
const require = createRequire(import.meta.url);
const outfile = `${root}dist/project-cli.bundle.cjs`;
const blob = `${root}dist/project-cli.snapshot.blob`;
/** What opens the function expression the bundle file is (`\n})` closes it). */
const CJS_WRAPPER_HEAD = '(function (exports, require, module, __filename, __dirname) {';


/** `require('bindings')('better_sqlite3.node')` → the addon, relative to the bundle. */
const sqliteAddon = {
  name: 'better-sqlite3-addon',
  setup(b) {
    const addon = require.resolve('better-sqlite3/build/Release/better_sqlite3.node');
    const fromBundle = relative(dirname(outfile), addon);
    b.onResolve({ filter: /^bindings$/ }, (args) => (args.importer.includes('/better-sqlite3/') ? { path: 'bindings', namespace: 'sqlite-addon' } : undefined));
    // The path found at build first; an installed package may have better-sqlite3 elsewhere (hoisted),
    // so otherwise where `require` resolves it from the bundle — still no `bindings` search.
    b.onLoad({ filter: /.*/, namespace: 'sqlite-addon' }, () => ({
      // process.dlopen by its absolute path: a require of a relative path resolves it first (stat
      // calls, extension probing), ~1 ms of a snapshot start. The bundle's folder is __dirname, or
      // argv[1] when the CLI starts from its snapshot (whose script has no __dirname).
      contents: `module.exports = (name) => {
  const { dirname, join } = process.getBuiltinModule('node:path');
  const base = typeof __dirname === 'string' ? __dirname : dirname(process.argv[1]);
  const addon = { exports: {} };
  try {
    process.dlopen(addon, join(base, ${JSON.stringify(fromBundle)}));
    return addon.exports;
  } catch (err) {
    if (err.code !== 'ERR_DLOPEN_FAILED') throw err;
    return require(join(dirname(require.resolve('better-sqlite3/package.json')), 'build', 'Release', name));
  }
};`,
      loader: 'js',
    }));
  },
};

await build({
  entryPoints: [`${root}dist/src/cli-router/main.js`],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // The addon itself is required at run time by its path (see sqliteAddon).
  external: ['*.node', 'better-sqlite3/package.json'],
  plugins: [zodEnglishOnly, sqliteAddon],
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  legalComments: 'none',
});
// The previous layout's ESM bundle, if any, must not be picked up by mistake; nor the previous build's code
// cache by the run below that writes this one (V8 checks only the source's length).
rmSync(`${root}dist/project-cli.bundle.mjs`, { force: true });
rmSync(`${outfile}.cache`, { force: true });
// The file holds the bundle in CommonJS's function wrapper, as one expression: bin/project-cli.cjs compiles
// it as it is. Wrapped there at each start, the 590 KB of source were copied again when V8 flattened the
// joined string (~150 page faults and ~3% of the CPU of a call from the bundle).
writeFileSync(outfile, `${CJS_WRAPPER_HEAD}${readFileSync(outfile, 'utf8')}\n})`);

// Write the code cache after one real call: the launcher compiles and evaluates
// the bundle, runs a `calendar.create` bound to a tool call (credential check,
// validation, handler, call record, commit) against a throwaway database and
// key, then saves V8's cache — which holds every function loading and that call
// compiled, so a subprocess call compiles little beyond its own handler.
// The call doubles as a smoke test of the bundle: a failed one fails the build.
await withThrowawayCall(async (call) => {
  await call([`${root}bin/project-cli.cjs`], { PROJECT_CLI_WRITE_CODE_CACHE: '1' });
  // The start-up snapshot the subprocess executor starts the CLI from (see
  // src/calls/cli-launch.ts); one call through it is its smoke test.
  if (buildSnapshot()) {
    await call(['--snapshot-blob', blob, outfile], { ...SNAPSHOT_LAUNCH_ENV });
    // The call through the blob passed on this node and CPU: written only now, so a daemon with the same
    // facts starts calls from this very blob without a probe of its own (src/calls/cli-snapshot-check.ts).
    const facts = await snapshotFacts(blob);
    if (facts) writeFileSync(snapshotCheckPath(blob), `${JSON.stringify(facts)}\n`);
  }
});

/**
 * A V8 start-up snapshot of the evaluated bundle: a child started from it
 * skips reading, compiling and evaluating the bundle (zod, our modules).
 * Node 20 builds one from a single CommonJS script whose `require` serves
 * built-ins only, so the entry wraps the bundle with a `require` that, once the
 * snapshot runs, serves built-ins through process.getBuiltinModule and anything
 * else through a real one rooted at the bundle (argv[1]: pg's lazy modules; the
 * better-sqlite3 addon is dlopen'ed by its path — no native addon is in the
 * snapshot). Nothing runs at build time beyond module evaluation and
 * `warmSnapshot` (src/cli-router/main.ts: every action's input schema built and
 * run over the action's example, the credential's claims schema run once —
 * pure zod: no random state, no store), so what a call runs first is built
 * and compiled already. The environment is empty, as a child's is of everything modules read
 * when they load. A blob fits only the node binary (and CPU) that built it: the daemon
 * trusts this build's check or probes it, and falls back to the bundle. Returns false (no blob) when this Node
 * cannot build one.
 */
function buildSnapshot() {
  rmSync(blob, { force: true });
  rmSync(snapshotCheckPath(blob), { force: true });
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-cli-snapshot-'));
  const entry = join(dir, 'project-cli.snapshot-entry.cjs');
  writeFileSync(entry, `'use strict';
globalThis.__zod_globalConfig = { jitless: true }; // as bin/project-cli.cjs sets it
const builtinRequire = require;
let deserialized = false;
let runtimeRequire = null;
// Made on first need only (pg's lazy modules): creating it was ~1 ms of a start that needs nothing beyond built-ins.
const realRequire = () => (runtimeRequire ??= process.getBuiltinModule('node:module').createRequire(process.argv[1]));
const bundleRequire = (id) => (deserialized ? (process.getBuiltinModule(id) ?? realRequire()(id)) : builtinRequire(id));
bundleRequire.resolve = (id, options) => realRequire().resolve(id, options);
const bundleModule = { exports: {} };
${readFileSync(outfile, 'utf8')}(bundleModule.exports, bundleRequire, bundleModule, undefined, undefined);
bundleModule.exports.warmSnapshot();
require('node:v8').startupSnapshot.setDeserializeMainFunction(() => {
  deserialized = true;
  return bundleModule.exports.runProjectCli().then(bundleModule.exports.exitNow);
});
`);
  try {
    execFileSync(process.execPath, ['--snapshot-blob', blob, '--build-snapshot', entry], { env: {}, stdio: ['ignore', 'ignore', 'pipe'] });
    return true;
  } catch (err) {
    rmSync(blob, { force: true });
    process.stderr.write(`bundle-cli: no start-up snapshot (the daemon starts project-cli from the bundle): ${String(err.stderr ?? err.message).trim()}\n`);
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `fn` with `call(nodeArgs, env)`: one real `calendar.create` through project-cli, checked. */
async function withThrowawayCall(fn) {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-cli-cache-'));
  try {
    const { loadSigningKey, issueClaims, signCredential } = await import(`${root}dist/src/auth/credential-issuer.js`);
    const { openSqliteStore } = await import(`${root}dist/src/store/sqlite/sqlite-store.js`);
    const { argsSha256 } = await import(`${root}dist/src/codec/canonical-json.js`);
    const db = join(dir, 'cache.db');
    const key = await loadSigningKey({}, dir);
    const store = openSqliteStore(db);
    await store.transaction((tx) => tx.credentialKeys.record(key.kid, key.publicJwk));
    await store.close();
    let n = 0;
    await fn(async (nodeArgs, env) => {
      const input = { title: 'code cache', start_at: '2026-01-01T10:00:00Z', end_at: '2026-01-01T11:00:00Z' };
      const args = { module: 'calendar', method: 'create', input };
      const call = { thread_id: 'build', tool_call_id: `build-${n++}`, args_sha256: argsSha256(args) };
      const { claims } = issueClaims({ userId: 'build', actions: ['calendar.create'], source: 'session', jobId: null, call });
      const out = execFileSync(process.execPath, [...nodeArgs, 'calendar', 'create'], {
        env: { ...env, PROJECT_CLI_CREDENTIAL: await signCredential(claims, key), TOOLGATE_DB: db },
        input: JSON.stringify(input),
        encoding: 'utf8',
      });
      if (!JSON.parse(out).ok) throw new Error(`project-cli (${nodeArgs.join(' ')}): the build's call failed: ${out}`);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
