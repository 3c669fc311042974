// Bundles the daemon (toolgate's CLI: serve, demo, conformance, …) into a few ESM files in dist/daemon/.
// Measured reason (docs/protocols/transports.md, "Lifecycle", its Start-up paragraph): every host that
// spawns toolgate waits for Node to resolve, read and compile ~300 small ESM files (zod's alone are 95)
// before `initialize` is answered; one bundle with the cold paths split off halves that.
//  - Entry points: the launcher's three imports (start-up-heap, cli, redact) and the checkpoint
//    worker, which src/store/sqlite/checkpointer.ts starts by a URL relative to its own file.
//  - Code splitting: what is imported lazily (the daemon's commands behind src/app/cli.ts, the --ws
//    listener, PostgreSQL, MCP on stdio, telemetry, conformance) stays in chunks of its own and is read
//    only by the runs that use it. Each import() is a split point and each chunk a module Node loads:
//    cli.ts imports the commands that open the store through one module (daemon-commands.ts).
//  - better-sqlite3 and the optional native modules stay external: a native addon cannot be bundled,
//    and the bench's commit probe patches better-sqlite3's prototype from outside.
//  - zod's 40 locales are replaced by English, as in project-cli's bundle (scripts/zod-english-only.mjs).
// bin/toolgate.mjs loads this bundle, or dist/src when it is absent, older than one of the dist/src
// files it was built from (inputs.json: a `tsc` alone after a build must not run stale code), or
// TOOLGATE_UNBUNDLED=1 (the bench's module hooks and coverage counters name files under dist/src).
import { build } from 'esbuild';
import { zodEnglishOnly } from './zod-english-only.mjs';
import { rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/daemon`;

rmSync(outdir, { recursive: true, force: true });
const { metafile } = await build({
  entryPoints: {
    'start-up-heap': `${root}dist/src/app/start-up-heap.js`,
    cli: `${root}dist/src/app/cli.js`,
    redact: `${root}dist/src/codec/redact.js`,
    'checkpoint-worker': `${root}dist/src/store/sqlite/checkpoint-worker.js`,
  },
  outdir,
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Flat: a chunk's import.meta.url must sit beside checkpoint-worker.js (see above).
  chunkNames: '[name]-[hash]',
  // Native addons, and the optional peers their packages try to require.
  external: ['better-sqlite3', 'pg-native', 'bufferutil', 'utf-8-validate', '*.node'],
  plugins: [zodEnglishOnly],
  // CommonJS dependencies (vscode-jsonrpc, pg, ws) call `require` for Node's built-ins.
  banner: { js: "import { createRequire as __toolgateCreateRequire } from 'node:module'; const require = __toolgateCreateRequire(import.meta.url);" },
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  logLevel: 'warning',
  legalComments: 'none',
  metafile: true,
  // metafile paths relative to the root, wherever the script is started from.
  absWorkingDir: root,
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

// What the launcher checks the bundle against: every dist/src file in it (newer than the bundle = stale).
const inputs = Object.keys(metafile.inputs).filter((f) => f.startsWith('dist/src/')).sort();
writeFileSync(`${outdir}/inputs.json`, `${JSON.stringify(inputs)}\n`);
