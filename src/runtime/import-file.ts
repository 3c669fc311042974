/**
 * `import()` of an ES module by its file URL, from code that may run inside
 * the daemon's bundle. That bundle is one CommonJS script compiled from a V8
 * code cache (scripts/bundle-daemon.mjs), and on Node 20 a dynamic `import()`
 * compiled from another process's cache has lost its loader
 * (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING). So the launcher, a real ES module,
 * hands the bundle its own `import` as the wrapper's `__toolgateImport`
 * argument; run from dist/src, there is none and `import()` is used.
 */
declare const __toolgateImport: ((url: string) => Promise<unknown>) | undefined;

export function importFile(url: string): Promise<unknown> {
  return typeof __toolgateImport === 'function' ? __toolgateImport(url) : import(url);
}
