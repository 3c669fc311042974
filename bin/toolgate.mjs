#!/usr/bin/env node
// Thin launcher: the daemon lives in src/ (built to dist/src; src/app is its entry) and ships as one
// CommonJS script, dist/daemon/toolgate.cjs, compiled here from its V8 code cache
// (scripts/bundle-daemon.mjs: a host waits for start-up, and the cache skips parsing and compiling what
// start-up runs). dist/src runs instead when the bundle is missing or older than what it was built from,
// or with TOOLGATE_UNBUNDLED=1 (tools that hook or count modules by their file: the bench's probes). Only
// a cache this very runtime wrote is used (bin/code-cache.cjs); with none, or one V8 refuses (other V8
// flags), the script is simply compiled. The young generation is held small while the daemon's modules load
// (src/app/start-up-heap.ts), so the daemon itself is loaded only after that.

// package.json's "engines": both launchers use process.getBuiltinModule (Node 20.16+ and 22.3+). On an older
// node: one line, exit 2.
if (typeof process.getBuiltinModule !== 'function') {
  process.stderr.write(`toolgate: Node.js ${process.version} is too old: toolgate needs Node.js 20.16+, 22.3+, 24 or 26\n`);
  process.exit(2);
}

// Built-ins through process.getBuiltinModule, not `import`: an ES module import of a built-in makes Node build
// its ESM facade, which reads every export, and node:fs's `ReadStream` getter then loads fs streams — a
// daemon on stdio never uses them (measured: ~4.5 ms of a start's CPU in a profile).
const { existsSync, readFileSync, statSync } = process.getBuiltinModule('node:fs');
const { createRequire } = process.getBuiltinModule('node:module');
const { fileURLToPath } = process.getBuiltinModule('node:url');
const { Script } = process.getBuiltinModule('node:vm');

const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = `${root}dist/daemon/toolgate.cjs`;

/** The errors of a module that cannot be loaded as the checkout stands: a file or package missing, or not the one it imports. */
const NOT_READY_CODES = new Set(['ERR_MODULE_NOT_FOUND', 'MODULE_NOT_FOUND', 'ERR_PACKAGE_PATH_NOT_EXPORTED']);

/**
 * A checkout without dist/ (or without node_modules, or with one it does not match) is a mistake to fix, not a
 * crash: one line, exit 2. False for any other error, which the caller reports as it is. A package whose
 * "exports" lack the import is a stale install only in a checkout, whose lockfile pins what the code imports;
 * in an installed copy (npm ships no lockfile) it is a dependency's new release, and the error itself, naming
 * the package and the path, says more than any advice.
 */
async function notReady(err) {
  if (!NOT_READY_CODES.has(err?.code)) return false;
  if (err.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED' && !existsSync(`${root}package-lock.json`)) return false;
  let line;
  try {
    line = (await import('./not-ready.mjs')).notReadyLine(err.message, root, err.code);
  } catch {
    // bin/ copied without it: still one line and exit 2, naming both steps.
    line = `toolgate: this checkout cannot run yet: run npm ci && npm run build in ${root}\n`;
  }
  process.stderr.write(line);
  process.exit(2);
}

/**
 * A checkout holds the TypeScript sources; an installed copy does not (package.json "files"), so nothing
 * there can rebuild dist/src after the bundle: its files' times say nothing. npm extracts a package with the
 * time of extraction, in its own file order (`.cache` before `.cjs` before `.js`), so there every dist/src
 * file looked newer than the bundle, and the bundle older than its cache's script: an installed daemon ran
 * dist/src, never its bundle or cache.
 */
const checkout = existsSync(`${root}src/app/cli.ts`);

/**
 * Whether dist/daemon holds a bundle at least as new as every dist/src file it was built from
 * (dist/daemon/inputs.json): after a `tsc` alone, dist/src is what the source says, and runs. In an
 * installed copy, whether there is a bundle.
 */
function bundleIsCurrent() {
  if (!checkout) return existsSync(bundle);
  try {
    // Paths, not URLs: ~200 files are stat'ed on every start, and a URL per file doubled the check's cost.
    const built = statSync(bundle).mtimeMs;
    const inputs = JSON.parse(readFileSync(`${root}dist/daemon/inputs.json`, 'utf8'));
    return inputs.every((file) => statSync(root + file).mtimeMs <= built);
  } catch {
    return false; // no bundle, or a file it was built from is gone
  }
}

/**
 * The name the bundle is compiled under, the same at build and at every start: on Node 20 a script compiled
 * from a code cache keeps the name it was cached under in its stack traces, which would otherwise show the
 * build machine's path in an installed copy's.
 */
const SCRIPT_NAME = 'toolgate/dist/daemon/toolgate.cjs';

/** bin/code-cache.cjs, shared with project-cli's launcher (required, not imported: no ES module wrapper for it). */
const codeCache = () => createRequire(import.meta.url)('./code-cache.cjs');

/**
 * The bundle compiled (from its code cache when V8 accepts it). Compiled before the young generation is held:
 * V8 accepts a cache only under the flags it was made with, and the build makes it under V8's own. V8 checks
 * the source's length only, so a cache older than the script (the script patched since the build) is not used.
 */
function compileBundle() {
  let cachedData;
  try {
    // Only a cache this very node wrote (bin/code-cache.cjs): another Node 20 release would crash on it.
    if (!checkout || statSync(`${bundle}.cache`).mtimeMs >= statSync(bundle).mtimeMs) cachedData = codeCache().readCodeCache(`${bundle}.cache`);
  } catch {
    /* no cache: compile normally */
  }
  // Pure ASCII (the build checks): as latin1 it is one external string, off the JavaScript heap.
  return new Script(readFileSync(bundle, 'latin1'), { filename: SCRIPT_NAME, cachedData });
}

/** The compiled bundle run: its exports (`main`, `crashLine`). */
function runBundle(compiled) {
  const module = { exports: {} };
  // The last argument imports an ES module by URL for the bundle (src/runtime/import-file.ts): on Node 20, an
  // import() compiled from the cache of another process has lost its loader.
  compiled.runInThisContext()(module.exports, createRequire(bundle), module, bundle, `${root}dist/daemon`, (url) => import(url));
  return module.exports;
}

const bundled = process.env.TOOLGATE_UNBUNDLED !== '1' && bundleIsCurrent();
let heap;
let compiled;
let daemon;
try {
  heap = await import(bundled ? '../dist/daemon/start-up-heap.js' : '../dist/src/app/start-up-heap.js');
  if (bundled) compiled = compileBundle();
  heap.holdYoungGeneration();
  daemon = compiled ? runBundle(compiled) : { ...(await import('../dist/src/app/cli.js')), ...(await import('../dist/src/app/crash-line.js')) };
} catch (err) {
  if (!(await notReady(err))) throw err;
}
const { main, crashLine } = daemon;

const code = await main().catch(async (err) => {
  // A command loads its code when it runs (src/app/cli.ts): a missing or mismatched dependency shows up here.
  await notReady(err);
  // Redacted like every log line: a token, a configured secret or a database URL's password never reaches stderr.
  process.stderr.write(`${crashLine(err)}\n`);
  return 1;
});
// The build's code cache (scripts/bundle-daemon.mjs), once the run has compiled what a start, a call and a stop
// need; under V8's own flags, as every start compiles the bundle.
if (compiled && process.env.TOOLGATE_WRITE_CODE_CACHE === '1') {
  heap.releaseYoungGeneration();
  codeCache().writeCodeCache(`${bundle}.cache`, compiled.createCachedData());
}
// Exit explicitly once stdout has drained: an open stdin must not keep a stopped daemon alive.
process.stdout.write('', () => process.exit(code));
