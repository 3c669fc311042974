#!/usr/bin/env node
// Thin launcher: the restricted CLI lives in src/cli-router. The build bundles
// it into one file, which starts about twice as fast as the module tree — and
// every subprocess tool call pays that start-up.
import { main } from '../dist/project-cli.bundle.mjs';

await main().catch((err) => {
  process.stdout.write(`${JSON.stringify({ ok: false, module: null, method: null, error: { code: 'INTERNAL', message: 'internal error', module: null, method: null } })}\n`);
  process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'project-cli crashed', err: String(err?.stack ?? err) })}\n`);
  process.exitCode = 1;
});
