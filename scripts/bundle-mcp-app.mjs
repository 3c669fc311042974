// Builds the MCP App (contract section 19) into dist/mcp-app/tool-card.html: one self-contained HTML
// document, which the daemon serves as `ui://toolgate/tool-card.html` (src/mcp/mcp-apps.ts).
// - src/inspector/mcp-app.ts and what it imports — the inspector's reference renderer
//   (ui-renderer.ts) and the ext-apps SDK's App — bundled for the browser and inlined as a module
//   script: the renderer has one source and two bundles (this one and scripts/bundle-inspector.mjs);
// - src/inspector/mcp-app.css with the renderer's styles (ui-renderer.css) inlined in a <style>;
// - src/inspector/mcp-app.html, the page they are put into.
// Nothing in the page is fetched: a host loads it under the extension's default CSP, no network.
// zod (the SDK validates every message with it) keeps its English messages only, as in the daemon's bundle.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';
import { zodEnglishOnly } from './zod-english-only.mjs';

const root = new URL('..', import.meta.url).pathname;
const src = `${root}src/inspector/`;
const out = `${root}dist/mcp-app/`;

/** The one output file of an in-memory esbuild run. */
async function bundled(options) {
  const { outputFiles } = await build({ ...options, bundle: true, write: false, minify: true, legalComments: 'none', logLevel: 'warning', outdir: out });
  if (outputFiles.length !== 1) throw new Error(`bundle-mcp-app: expected one output, got ${outputFiles.map((f) => f.path).join(', ')}`);
  return outputFiles[0].text;
}

const js = await bundled({ entryPoints: [`${src}mcp-app.ts`], platform: 'browser', format: 'esm', target: 'es2022', plugins: [zodEnglishOnly] });
const css = await bundled({ entryPoints: [`${src}mcp-app.css`] });

// Inline text must not close its element early.
const inline = (text, tag) => text.replace(new RegExp(`</(${tag})`, 'gi'), '<\\/$1');
const page = readFileSync(`${src}mcp-app.html`, 'utf8');
const html = page
  .replace('/*TOOLGATE_APP_CSS*/', () => inline(css, 'style'))
  .replace('/*TOOLGATE_APP_JS*/', () => inline(js, 'script'));
if (html === page || html.includes('/*TOOLGATE_APP_')) throw new Error('bundle-mcp-app: src/inspector/mcp-app.html lost a placeholder');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
writeFileSync(`${out}tool-card.html`, html);
