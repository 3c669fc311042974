#!/usr/bin/env node
'use strict';
// The launcher of the restricted CLI (src/cli-router), as CommonJS: the
// subprocess executor starts it for every call from the bundle, and an ES
// module entry makes Node 20 set up its ESM loader first (~150 page faults
// and several ms of CPU per start). `bin/project-cli.mjs`, the command people
// run, is this file imported.
//
// The build bundles the CLI into one CommonJS file plus a V8 code cache for it
// (scripts/bundle-cli.mjs), because every subprocess tool call pays this
// start-up: compiling from the cache skips parsing and the lazy compilation of
// what start-up runs. Only a cache this very runtime wrote is used
// (bin/code-cache.cjs); with none, or one V8 refuses (other V8 flags), the
// bundle is simply compiled.
// package.json's "engines": process.getBuiltinModule is Node 20.16+ and 22.3+. Older: one line, exit 2.
if (typeof process.getBuiltinModule !== 'function') {
  process.stderr.write(`project-cli: Node.js ${process.version} is too old: project-cli needs Node.js 20.16+, 22.3+, 24 or 26\n`);
  process.exit(2);
}
const { readFileSync } = process.getBuiltinModule('node:fs');
const { createRequire } = process.getBuiltinModule('node:module');
const { dirname, join } = process.getBuiltinModule('node:path');
const { Script } = process.getBuiltinModule('node:vm');
// A bin/ copied without it runs without a cache, as when there is none.
const { readCodeCache, writeCodeCache } = (() => {
  try {
    return createRequire(__filename)('./code-cache.cjs');
  } catch {
    return { readCodeCache: () => undefined, writeCodeCache: () => {} };
  }
})();

const bundle = join(__dirname, '..', 'dist', 'project-cli.bundle.cjs');
const cacheFile = `${bundle}.cache`;
/** How the build starts the bundle file: CommonJS's function wrapper (scripts/bundle-cli.mjs). */
const WRAPPER_HEAD = '(function (exports, require, module, __filename, __dirname) {';

// A one-shot process parses each schema once or twice: zod's JIT fast path (a
// `new Function` per object schema) costs more than it saves. Same results.
// zod reads this object when it loads.
globalThis.__zod_globalConfig = { jitless: true };

function load() {
  // Only a cache this very node wrote (bin/code-cache.cjs): another Node 20 release would crash on it.
  const cachedData = readCodeCache(cacheFile);
  // The file is the bundle in CommonJS's function wrapper already (scripts/bundle-cli.mjs): compiled as it is,
  // with no joined string for V8 to copy again. A bundle built before the build wrapped it (a checkout pulled
  // but not rebuilt) is wrapped here, as it was then, and still runs.
  let source = readFileSync(bundle, 'utf8');
  if (!source.startsWith(WRAPPER_HEAD)) source = `${WRAPPER_HEAD}${source}\n})`;
  const script = new Script(source, { filename: bundle, cachedData });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  return { runProjectCli: module.exports.runProjectCli, exitNow: module.exports.exitNow, script };
}

let loaded;
try {
  loaded = load();
} catch (err) {
  if (err?.code !== 'ENOENT') throw err;
  // A checkout without dist/ is a mistake to fix, not a crash: one line, exit 2.
  process.stderr.write(`project-cli: this checkout cannot run yet, it is not built (no ${bundle}): run npm ci && npm run build in ${join(__dirname, '..')}/\n`);
  process.exit(2);
}
const { runProjectCli, exitNow, script } = loaded;
void runProjectCli().then(() => {
  // `?.`: a bundle built before exitNow existed ends the natural way.
  if (process.env.PROJECT_CLI_WRITE_CODE_CACHE !== '1') exitNow?.();
  else {
    // The build step (scripts/bundle-cli.mjs) only, after a real call it made up
    // (a fresh database, key and credential): V8's cache then holds every function
    // that loading *and* one call compiled, so a call compiles almost nothing.
    writeCodeCache(cacheFile, script.createCachedData());
  }
});
