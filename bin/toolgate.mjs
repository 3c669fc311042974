#!/usr/bin/env node
// Thin launcher: the daemon lives in src/ (built to dist/src; src/app is its entry) and ships as a
// bundle in dist/daemon (scripts/bundle-daemon.mjs: a host waits for start-up, and one bundle starts
// in half the time of ~300 module files). dist/src runs instead when the bundle is missing or older
// than what it was built from, or with TOOLGATE_UNBUNDLED=1 (tools that hook or count modules by
// their file: the bench's probes). The young generation is held small
// while the daemon's modules load (src/app/start-up-heap.ts), so the daemon itself is imported only
// after that.

import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A checkout without dist/ (or without node_modules) is a mistake to fix, not a crash: one line, exit 2. */
function notReady(err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
  const root = new URL('..', import.meta.url).pathname;
  const missing = /Cannot find package/.test(String(err.message)) ? ['its dependencies are not installed', 'npm ci'] : ['it is not built (no dist/)', 'npm ci && npm run build'];
  process.stderr.write(`toolgate: this checkout cannot run yet, ${missing[0]}: run ${missing[1]} in ${root}\n`);
  process.exit(2);
}

/**
 * Whether dist/daemon holds a bundle at least as new as every dist/src file it was built from
 * (dist/daemon/inputs.json): after a `tsc` alone, dist/src is what the source says, and runs.
 */
function bundleIsCurrent() {
  try {
    // Paths, not URLs: ~200 files are stat'ed on every start, and a URL per file doubled the check's cost.
    const root = fileURLToPath(new URL('..', import.meta.url));
    const built = statSync(`${root}dist/daemon/cli.js`).mtimeMs;
    const inputs = JSON.parse(readFileSync(`${root}dist/daemon/inputs.json`, 'utf8'));
    return inputs.every((file) => statSync(root + file).mtimeMs <= built);
  } catch {
    return false; // no bundle, or a file it was built from is gone
  }
}
const bundled = process.env.TOOLGATE_UNBUNDLED !== '1' && bundleIsCurrent();
const from = (bundle, module) => (bundled ? `../dist/daemon/${bundle}.js` : `../dist/src/${module}.js`);

const { holdYoungGeneration } = await import(from('start-up-heap', 'app/start-up-heap')).catch(notReady);
holdYoungGeneration();
const { main } = await import(from('cli', 'app/cli')).catch(notReady);
const { redact } = await import(from('redact', 'codec/redact'));

const code = await main().catch((err) => {
  // A command imports its code when it runs (src/app/cli.ts): a missing dependency shows up here.
  if (err?.code === 'ERR_MODULE_NOT_FOUND') notReady(err);
  // Redacted like every log line: a token or a database URL's password never reaches stderr.
  process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'toolgate crashed', err: redact(String(err?.stack ?? err)) })}\n`);
  return 1;
});
// Exit explicitly once stdout has drained: an open stdin must not keep a stopped daemon alive.
process.stdout.write('', () => process.exit(code));
