// Bundles the daemon (toolgate's CLI: serve, demo, conformance, …) into ONE CommonJS script plus a V8 code
// cache for it, in dist/daemon/, as project-cli is (scripts/bundle-cli.mjs).
// Measured reason (docs/protocols/transports.md, "Lifecycle", its Start-up paragraph): every host that
// spawns toolgate waits for Node to read and compile the daemon before `initialize` is answered, and every
// test that spawns one pays it in CPU. ~300 small ESM files (zod's alone are 95) were bundled into ESM chunks
// first (half the start-up); Node 20 has no compile cache for ESM (`module.enableCompileCache` is 22+), so
// the daemon is now one script that bin/toolgate.mjs compiles from a V8 code cache: measured on this 2-core
// machine, a `serve --stdio` start to its `initialize` answer and exit 0.36 → 0.28 s of CPU (medians of 12).
//  - The script is a function expression `(function (exports, require, module, __filename, __dirname) {…})`
//    (banner and footer), compiled as is: no wrapper string is built around 3 MB of source at each start.
//    It is pure ASCII, read as latin1: V8 keeps it as one external string, off the JavaScript heap.
//  - What is imported lazily (the daemon's commands behind src/app/cli.ts, the --ws listener, PostgreSQL, MCP,
//    telemetry, conformance) stays lazy: esbuild wraps each module in an initializer that runs on first
//    import, and V8 compiles a function only when it first runs. A command runs only what it needs.
//  - `import.meta.url` is the script's own file URL (dist/daemon/toolgate.cjs): the checkpoint worker,
//    src/store/sqlite/checkpointer.ts starts by a URL relative to its own file, is an ESM entry of its own
//    beside it (dist/daemon/checkpoint-worker.js), and the package root is found from there. So is
//    start-up-heap.js, the launcher's first import: the young generation is held before the script loads.
//  - better-sqlite3 and the optional native modules stay external: a native addon cannot be bundled,
//    and the bench's commit probe patches better-sqlite3's prototype from outside.
//  - zod's 40 locales are replaced by English, as in project-cli's bundle (scripts/zod-english-only.mjs).
//  - No `keepNames`: it wraps every named function and arrow in `__name(fn, "fn")`, an Object.defineProperty
//    each time the closure is made — ~20 a call on the call path (vscode-jsonrpc's `dispose` arrows, our
//    per-call closures; 5 % of a steady call's main-thread time in a profile) and thousands at start-up.
//    Measured on this 2-core machine without it (2026-12-07, interleaved): a `serve --stdio` start to
//    `initialize` and exit 0.935× the CPU (median of 15 pairs), an in-process call 0.966× the main thread's
//    CPU sequential and 0.979× at concurrency 8 (10 rounds), the script 156 KB smaller. Identifiers are not
//    minified, so a function keeps its own name, except where esbuild renames a symbol: to avoid a clash
//    between two modules (`dispatchRequest2`, pg's `DatabaseError2`), or a class that refers to itself
//    (`_CallStopped`). Such a name shows in stack traces and `constructor.name`. Nothing reads a name for
//    behaviour; a span's `error.type` reads the error's own `name` (src/telemetry/spans.ts).
//  - The code cache is written after a real start: the launcher runs `serve --stdio` on a throwaway
//    database, answers `initialize`, opens a session, runs one in-process `calendar.create` and stops; V8's
//    cache then holds every function that start, call and stop compiled. The run doubles as a smoke test:
//    a failed start or call fails the build.
// bin/toolgate.mjs loads this bundle, or dist/src when it is absent, older than one of the dist/src
// files it was built from (inputs.json: a `tsc` alone after a build must not run stale code), or
// TOOLGATE_UNBUNDLED=1 (the bench's module hooks and coverage counters name files under dist/src).
import { build } from 'esbuild';
import { SignJWT } from 'jose';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { zodEnglishOnly } from './zod-english-only.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/daemon`;
const script = `${outdir}/toolgate.cjs`;

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  // Native addons, and the optional peers their packages try to require.
  external: ['better-sqlite3', 'pg-native', 'bufferutil', 'utf-8-validate', '*.node'],
  plugins: [zodEnglishOnly],
  minifyWhitespace: true,
  minifySyntax: true,
  // Non-ASCII characters escaped: the script is read as latin1, one byte a character.
  charset: 'ascii',
  logLevel: 'warning',
  legalComments: 'none',
  metafile: true,
  // metafile paths relative to the root, wherever the script is started from.
  absWorkingDir: root,
};

rmSync(outdir, { recursive: true, force: true });
const { metafile } = await build({
  ...common,
  stdin: {
    contents: [
      "export { main } from './dist/src/app/cli.js';",
      "export { crashLine } from './dist/src/app/crash-line.js';",
    ].join('\n'),
    resolveDir: root,
    sourcefile: 'toolgate-entry.js',
  },
  outfile: script,
  format: 'cjs',
  define: { 'import.meta.url': '__toolgateModuleUrl' },
  // A dynamic import() compiled from another process's code cache has lost its loader on Node 20: packages'
  // import() of built-ins become require(), and ours of a file (the demo host) goes through the launcher's
  // own import, the wrapper's __toolgateImport (src/runtime/import-file.ts).
  supported: { 'dynamic-import': false },
  banner: { js: "(function (exports, require, module, __filename, __dirname, __toolgateImport) {const __toolgateModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
  footer: { js: '\n})' },
});
const worker = await build({
  ...common,
  // The launcher's first import (the young generation held before the script loads), and the checkpoint thread.
  entryPoints: { 'start-up-heap': `${root}dist/src/app/start-up-heap.js`, 'checkpoint-worker': `${root}dist/src/store/sqlite/checkpoint-worker.js` },
  outdir,
  format: 'esm',
});

// esbuild gives a dynamically imported CommonJS module its default export only, where Node gives named
// ones too: a lazy dependency is imported by a module of ours that imports it statically (as
// src/telemetry/otel-sdk.ts does), so a bare `await import('package')` of ours fails the build here.
// (@opentelemetry/resources' own lazy imports serve its host-id detectors, which the daemon does not use.)
const lazyPackages = Object.entries(metafile.inputs).filter(([file]) => file.startsWith('dist/src/')).flatMap(([file, { imports }]) =>
  imports.filter((i) => i.kind === 'dynamic-import' && i.path.includes('node_modules/')).map((i) => `${file} → ${i.path}`),
);
if (lazyPackages.length > 0) {
  rmSync(outdir, { recursive: true, force: true }); // no bundle rather than a broken one the launcher would run
  throw new Error(`bundle-daemon: import a package lazily through a module of ours:\n  ${lazyPackages.join('\n  ')}`);
}
if (readFileSync(script).some((byte) => byte > 0x7f)) {
  rmSync(outdir, { recursive: true, force: true });
  throw new Error('bundle-daemon: the script is not pure ASCII (the launcher reads it as latin1)');
}

// What the launcher checks the bundle against: every dist/src file in it (newer than the bundle = stale).
const inputs = [...new Set([...Object.keys(metafile.inputs), ...Object.keys(worker.metafile.inputs)])].filter((f) => f.startsWith('dist/src/')).sort();
writeFileSync(`${outdir}/inputs.json`, `${JSON.stringify(inputs)}\n`);

await writeCodeCache();

/** One real start, session and call through the launcher, which writes the cache as it exits (TOOLGATE_WRITE_CODE_CACHE). */
async function writeCodeCache() {
  const home = mkdtempSync(join(tmpdir(), 'toolgate-code-cache-'));
  let child;
  try {
    const secret = 'code-cache-build-secret-0123456789abcdef';
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('build').setIssuedAt().setExpirationTime('10m').sign(new TextEncoder().encode(secret));
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocol_version: '1', client_info: { name: 'bundle-daemon', version: '1' } } },
      { jsonrpc: '2.0', id: 2, method: 'session/open', params: { auth: { type: 'bearer', token } } },
    ];
    const { PATH, SYSTEMROOT } = process.env;
    child = spawn(process.execPath, [`${root}bin/toolgate.mjs`, 'serve', '--stdio', '--executor', 'inprocess', '--db', join(home, 'cache.db')], {
      env: { PATH, SYSTEMROOT, TOOLGATE_HOME: home, TOOLGATE_BEARER_SECRET: secret, TOOLGATE_WRITE_CODE_CACHE: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const frame = (m) => {
      const body = JSON.stringify(m);
      return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    };
    let out = '';
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    const answered = (id) => new RegExp(`"id":${id},"(result|error)"`).exec(out);
    // A daemon that neither answers nor exits fails the build within a minute, never hangs it.
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', () => clearTimeout(timer));
    const wait = (id) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const m = answered(id);
          if (!m) return;
          child.stdout.off('data', onData);
          if (m[1] === 'error') reject(new Error(`bundle-daemon: request ${id} failed: ${out.slice(-500)}`));
          else resolve();
        };
        const onData = (c) => {
          out += c;
          check();
        };
        child.stdout.on('data', onData);
        child.once('exit', () => reject(new Error(`bundle-daemon: the daemon exited before answering ${id}:\n${err.slice(-2000)}`)));
        check();
      });
    child.stdin.write(messages.map(frame).join(''));
    await wait(2);
    const session = /"session_id":"([^"]+)"/.exec(out)?.[1];
    child.stdin.write(
      frame({
        jsonrpc: '2.0',
        id: 3,
        method: 'tool/invoke',
        params: {
          session_id: session,
          thread_id: 'build',
          tool_call_id: 'c1',
          args: { module: 'calendar', method: 'create', input: { title: 'Build', start_at: '2026-01-05T10:00:00Z', end_at: '2026-01-05T11:00:00Z' } },
        },
      }),
    );
    await wait(3);
    if (!/"status":"success"/.test(out)) throw new Error(`bundle-daemon: the smoke call did not succeed: ${out.slice(-800)}`);
    child.stdin.end();
    const code = await new Promise((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`bundle-daemon: the daemon exited with ${code}:\n${err.slice(-2000)}`);
    readFileSync(`${script}.cache`); // written, or this throws
  } catch (e) {
    child?.kill('SIGKILL');
    rmSync(outdir, { recursive: true, force: true }); // no bundle rather than one that was never started
    throw e;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
