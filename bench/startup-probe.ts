/**
 * One start-up probe, run as its own process by bench/startup.ts: loads one
 * thing the way project-cli would and exits. Its wall time minus the `none`
 * probe's is that thing's cost at start-up.
 *
 *   node startup-probe.js none|crypto|webcrypto|sqlite|zod|jose|bundle
 */
import { createRequire } from 'node:module';

const what = process.argv[2] ?? 'none';
const require = createRequire(import.meta.url);

switch (what) {
  case 'none':
    break;
  case 'crypto':
    process.getBuiltinModule('node:crypto').createHash('sha256').update('x').digest('hex');
    break;
  case 'webcrypto':
    await globalThis.crypto.subtle.digest('SHA-256', new Uint8Array(1));
    break;
  case 'sqlite': {
    const Database = require('better-sqlite3') as typeof import('better-sqlite3');
    new Database(':memory:').close();
    break;
  }
  case 'zod':
    await import('zod');
    break;
  case 'jose':
    await import('jose');
    break;
  case 'bundle': {
    // What bin/project-cli.mjs does before it runs main(): read, compile from the cache, evaluate.
    const { readFileSync } = process.getBuiltinModule('node:fs');
    const { Script } = process.getBuiltinModule('node:vm');
    const { dirname, join } = process.getBuiltinModule('node:path');
    const bundle = join(process.argv[3]!, 'dist', 'project-cli.bundle.cjs');
    // The launcher's own reader: a cache stamped by this node, else none (bin/code-cache.cjs).
    const { readCodeCache } = require(join(process.argv[3]!, 'bin', 'code-cache.cjs')) as { readCodeCache(file: string): Buffer | undefined };
    const cachedData = readCodeCache(`${bundle}.cache`);
    (globalThis as { __zod_globalConfig?: unknown }).__zod_globalConfig = { jitless: true };
    // The file is the bundle in its CommonJS function wrapper already (scripts/bundle-cli.mjs).
    const script = new Script(readFileSync(bundle, 'utf8'), { filename: bundle, cachedData });
    const mod = { exports: {} };
    (script.runInThisContext() as (...a: unknown[]) => void)(mod.exports, createRequire(bundle), mod, bundle, dirname(bundle));
    break;
  }
  default:
    process.exitCode = 2;
}
