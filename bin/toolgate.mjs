#!/usr/bin/env node
// Thin launcher: the daemon lives in src/ (built to dist/src; src/app is its entry) and ships as a
// bundle in dist/daemon (scripts/bundle-daemon.mjs: a host waits for start-up, and one bundle starts
// in half the time of ~300 module files). TOOLGATE_UNBUNDLED=1 runs dist/src instead, for tools
// that hook or count modules by their file (the bench's probes). The young generation is held small
// while the daemon's modules load (src/app/start-up-heap.ts), so the daemon itself is imported only
// after that.

/** A checkout without dist/ (or without node_modules) is a mistake to fix, not a crash: one line, exit 2. */
function notReady(err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
  const root = new URL('..', import.meta.url).pathname;
  const missing = /Cannot find package/.test(String(err.message)) ? ['its dependencies are not installed', 'npm ci'] : ['it is not built (no dist/)', 'npm ci && npm run build'];
  process.stderr.write(`toolgate: this checkout cannot run yet, ${missing[0]}: run ${missing[1]} in ${root}\n`);
  process.exit(2);
}

const { existsSync } = await import('node:fs');
const bundled = process.env.TOOLGATE_UNBUNDLED !== '1' && existsSync(new URL('../dist/daemon/cli.js', import.meta.url));
const from = (bundle, module) => (bundled ? `../dist/daemon/${bundle}.js` : `../dist/src/${module}.js`);

const { holdYoungGeneration } = await import(from('start-up-heap', 'app/start-up-heap')).catch(notReady);
holdYoungGeneration();
const { main } = await import(from('cli', 'app/cli')).catch(notReady);
const { redact } = await import(from('redact', 'codec/redact'));

const code = await main().catch((err) => {
  // Redacted like every log line: a token or a database URL's password never reaches stderr.
  process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'toolgate crashed', err: redact(String(err?.stack ?? err)) })}\n`);
  return 1;
});
// Exit explicitly once stdout has drained: an open stdin must not keep a stopped daemon alive.
process.stdout.write('', () => process.exit(code));
