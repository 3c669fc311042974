// An esbuild plugin shared by the bundles of project-cli (bundle-cli.mjs) and of the daemon
// (bundle-daemon.mjs): zod's classic entry re-exports every locale as `z.locales` (357 KB of 40
// languages); only `en`, the one zod configures by default and the only one toolgate uses, is kept.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('..', import.meta.url));

export const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    const en = require.resolve('zod/v4/locales/en.js');
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) => (args.importer.includes('/zod/') ? { path: 'zod-locales', namespace: 'zod-en' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'zod-en' }, () => ({ contents: `export { default as en } from ${JSON.stringify(en)};`, loader: 'js', resolveDir: root }));
  },
};
