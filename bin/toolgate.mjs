#!/usr/bin/env node
// Thin launcher: the daemon lives in src/daemon (built to dist/). The young
// generation is held small while the daemon's modules load
// (src/app/start-up-heap.ts), so the daemon itself is imported only after that.
import { holdYoungGeneration } from '../dist/src/app/start-up-heap.js';

holdYoungGeneration();
const { main } = await import('../dist/src/app/cli.js');

const code = await main().catch((err) => {
  process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'toolgate crashed', err: String(err?.stack ?? err) })}\n`);
  return 1;
});
// Exit explicitly once stdout has drained: an open stdin must not keep a stopped daemon alive.
process.stdout.write('', () => process.exit(code));
