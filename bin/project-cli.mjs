#!/usr/bin/env node
// Thin launcher: the restricted CLI lives in src/cli-router (built to dist/).
import { main } from '../dist/src/cli-router/main.js';

await main().catch((err) => {
  process.stdout.write(`${JSON.stringify({ ok: false, module: null, method: null, error: { code: 'INTERNAL', message: 'internal error', module: null, method: null } })}\n`);
  process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'project-cli crashed', err: String(err?.stack ?? err) })}\n`);
  process.exitCode = 1;
});
