// Bundles project-cli into one ES module. Measured reason (see bench/ and the
// README): each tool call with the subprocess executor starts a fresh Node;
// loading ~200 small ESM files of zod/jose/our modules cost ~110 ms of the
// ~180 ms start-up, and one bundled file roughly halves it. better-sqlite3
// stays external (native addon).
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
await build({
  entryPoints: [`${root}dist/src/cli-router/main.js`],
  outfile: `${root}dist/project-cli.bundle.mjs`,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3'],
  // Bundled CommonJS dependencies may call require(): give the ESM bundle one.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: 'warning',
  legalComments: 'none',
});
