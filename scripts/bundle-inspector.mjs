// Builds the web inspector into dist/inspector/, the folder `serve --ws` serves:
// - inspector.js: src/inspector/main.ts and everything it imports, one ES module for the browser;
// - ui-renderer.js: the reference ui_schema renderer alone, for front ends (and tests) that embed it;
// - inspector.css: src/inspector/inspector.css with the renderer's own styles (ui-renderer.css, which
//   the MCP App's bundle uses too: scripts/bundle-mcp-app.mjs) inlined where it imports them;
// - index.html, favicon.svg: copied as they are.
//
// The inspector imports a few constants from the daemon's own source (the action names and example
// inputs of the action table, the JSON-RPC error codes) instead of copying them. Those modules also
// hold code the browser does not need (zod's input schemas, vscode-jsonrpc), so the bundler does not follow them into
// the browser: it replaces each with a module of the values the real one exports, evaluated here
// from the compiled build (run after tsc). Types come from the same files, through the compiler.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const src = `${root}src/inspector/`;
const out = `${root}dist/inspector/`;

/** Source modules the browser gets as values: path under src/ → the exports the inspector uses. */
const SNAPSHOTS = {
  'protocol/action-table': ['ACTION_NAMES', 'ACTION_EXAMPLES'],
  'protocol/errors': ['RpcErrorCode'],
};

const snapshotPlugin = {
  name: 'toolgate-source-snapshots',
  setup(b) {
    const filter = new RegExp(`/src/(${Object.keys(SNAPSHOTS).map((k) => k.replace('/', '\\/')).join('|')})\\.(js|ts)$`);
    b.onResolve({ filter: /^\.\.?\// }, (args) => {
      const resolved = new URL(args.path, `file://${args.resolveDir}/`).pathname;
      const m = filter.exec(resolved);
      return m ? { path: m[1], namespace: 'toolgate-snapshot' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'toolgate-snapshot' }, async (args) => {
      const mod = await import(`${root}dist/src/${args.path}.js`);
      const lines = SNAPSHOTS[args.path].map((name) => {
        if (!(name in mod)) throw new Error(`src/${args.path} has no export ${name}`);
        return `export const ${name} = Object.freeze(${JSON.stringify(mod[name])});`;
      });
      return { contents: `// Evaluated at build time from src/${args.path}.ts\n${lines.join('\n')}\n`, loader: 'js' };
    });
  },
};

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { inspector: `${src}main.ts`, 'ui-renderer': `${src}ui-renderer.ts` },
  outdir: out,
  bundle: true,
  platform: 'browser',
  format: 'esm',
  target: 'es2022',
  plugins: [snapshotPlugin],
  logLevel: 'warning',
  legalComments: 'none',
});
await build({
  entryPoints: [`${src}inspector.css`],
  outdir: out,
  bundle: true,
  logLevel: 'warning',
  legalComments: 'none',
});
for (const file of ['index.html', 'favicon.svg']) copyFileSync(`${src}${file}`, `${out}${file}`);
