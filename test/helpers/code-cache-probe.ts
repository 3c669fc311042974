/**
 * Preloaded into a spawned `toolgate` (`NODE_OPTIONS=--import=<this file's URL>`, with CODE_CACHE_LOG naming
 * a file): every `vm.Script` the process compiles appends one JSON line there — its name, whether it was
 * given cached data, and whether V8 refused it. What bin/toolgate.mjs really does with the bundle's code
 * cache, seen from outside.
 */
import { appendFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import vm from 'node:vm';

const log = process.env.CODE_CACHE_LOG;
if (log !== undefined && log !== '') {
  const file = log;
  const Original = vm.Script;
  class LoggedScript extends Original {
    constructor(code: string, options?: vm.ScriptOptions | string) {
      super(code, options as vm.ScriptOptions);
      const o = typeof options === 'object' ? options : {};
      appendFileSync(file, `${JSON.stringify({ filename: o.filename ?? null, cached: o.cachedData !== undefined, rejected: this.cachedDataRejected ?? null })}\n`);
    }
  }
  vm.Script = LoggedScript;
  // The launchers take node:vm through process.getBuiltinModule, the object patched above; an ES module
  // `import { Script } from 'node:vm'` (a script of the bench's, say) reads the patched class after this.
  syncBuiltinESMExports();
}
