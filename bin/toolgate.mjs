#!/usr/bin/env node
// Thin launcher: the daemon lives in src/ (built to dist/; src/app is its entry). The young
// generation is held small while the daemon's modules load
// (src/app/start-up-heap.ts), so the daemon itself is imported only after that.

/** A checkout without dist/ (or without node_modules) is a mistake to fix, not a crash: one line, exit 2. */
function notReady(err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
  const root = new URL('..', import.meta.url).pathname;
  const missing = /Cannot find package/.test(String(err.message)) ? ['its dependencies are not installed', 'npm ci'] : ['it is not built (no dist/)', 'npm ci && npm run build'];
  process.stderr.write(`toolgate: this checkout cannot run yet, ${missing[0]}: run ${missing[1]} in ${root}\n`);
  process.exit(2);
}

const { holdYoungGeneration } = await import('../dist/src/app/start-up-heap.js').catch(notReady);
holdYoungGeneration();
const { main } = await import('../dist/src/app/cli.js').catch(notReady);
const { redact } = await import('../dist/src/codec/redact.js');

const code = await main().catch((err) => {
  // Redacted like every log line: a token or a database URL's password never reaches stderr.
  process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'toolgate crashed', err: redact(String(err?.stack ?? err)) })}\n`);
  return 1;
});
// Exit explicitly once stdout has drained: an open stdin must not keep a stopped daemon alive.
process.stdout.write('', () => process.exit(code));
