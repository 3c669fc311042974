#!/usr/bin/env node
// Thin launcher: the daemon lives in src/ (built to dist/; src/app is its entry). The young
// generation is held small while the daemon's modules load
// (src/app/start-up-heap.ts), so the daemon itself is imported only after that.
import { holdYoungGeneration } from '../dist/src/app/start-up-heap.js';

holdYoungGeneration();
const { main } = await import('../dist/src/app/cli.js');
const { redact } = await import('../dist/src/codec/redact.js');

const code = await main().catch((err) => {
  // Redacted like every log line: a token or a database URL's password never reaches stderr.
  process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'toolgate crashed', err: redact(String(err?.stack ?? err)) })}\n`);
  return 1;
});
// Exit explicitly once stdout has drained: an open stdin must not keep a stopped daemon alive.
process.stdout.write('', () => process.exit(code));
