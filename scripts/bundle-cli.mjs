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
//  - zod runs without its JIT (set by bin/project-cli.mjs).
//  - better-sqlite3's JavaScript is bundled too; its native addon is loaded by
//    a path fixed at build time instead of through `bindings`, which searches
//    a dozen candidate folders and walks a stack trace on every start.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const require = createRequire(import.meta.url);
const outfile = `${root}dist/project-cli.bundle.cjs`;

/** zod's classic entry re-exports every locale as `z.locales`; keep only `en`. */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    const en = require.resolve('zod/v4/locales/en.js');
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) => (args.importer.includes('/zod/') ? { path: 'zod-locales', namespace: 'zod-en' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'zod-en' }, () => ({ contents: `export { default as en } from ${JSON.stringify(en)};`, loader: 'js', resolveDir: root }));
  },
};

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
      contents: `const { dirname, join } = require('node:path');
module.exports = (name) => {
  try {
    return require(${JSON.stringify(`./${fromBundle}`)});
  } catch (err) {
    if (err.code !== 'MODULE_NOT_FOUND') throw err;
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
// The previous layout's ESM bundle, if any, must not be picked up by mistake.
rmSync(`${root}dist/project-cli.bundle.mjs`, { force: true });

// Write the code cache after one real call: the launcher compiles and evaluates
// the bundle, runs a `calendar.create` bound to a tool call (credential check,
// validation, handler, call record, commit) against a throwaway database and
// key, then saves V8's cache — which holds every function loading and that call
// compiled, so a subprocess call compiles little beyond its own handler.
// The call doubles as a smoke test of the bundle: a failed one fails the build.
await writeCodeCache();

async function writeCodeCache() {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-cli-cache-'));
  try {
    const { loadSigningKey, issueClaims, signCredential } = await import(`${root}dist/src/daemon/credential-issuer.js`);
    const { openSqliteStore } = await import(`${root}dist/src/store/sqlite/sqlite-store.js`);
    const { argsSha256 } = await import(`${root}dist/src/codec/canonical-json.js`);
    const db = join(dir, 'cache.db');
    const key = await loadSigningKey({}, dir);
    const store = openSqliteStore(db);
    await store.transaction((tx) => tx.credentialKeys.record(key.kid, key.publicJwk));
    await store.close();
    const input = { title: 'code cache', start_at: '2026-01-01T10:00:00Z', end_at: '2026-01-01T11:00:00Z' };
    const args = { module: 'calendar', method: 'create', input };
    const call = { thread_id: 'build', tool_call_id: 'code-cache', args_sha256: argsSha256(args) };
    const { claims } = issueClaims({ userId: 'build', actions: ['calendar.create'], source: 'session', jobId: null, call });
    const out = execFileSync(process.execPath, [`${root}bin/project-cli.mjs`, 'calendar', 'create'], {
      env: { PROJECT_CLI_WRITE_CODE_CACHE: '1', PROJECT_CLI_CREDENTIAL: await signCredential(claims, key), TOOLGATE_DB: db },
      input: JSON.stringify(input),
      encoding: 'utf8',
    });
    if (!JSON.parse(out).ok) throw new Error(`project-cli bundle: the code-cache call failed: ${out}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
