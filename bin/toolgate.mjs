#!/usr/bin/env node
// Thin launcher: the daemon lives in src/daemon (built to dist/).
import { main } from '../dist/src/app/cli.js';

const code = await main().catch((err) => {
  process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'toolgate crashed', err: String(err?.stack ?? err) })}\n`);
  return 1;
});
// Exit explicitly once stdout has drained: an open stdin must not keep a stopped daemon alive.
process.stdout.write('', () => process.exit(code));
