/**
 * MCP Apps (`io.modelcontextprotocol/ui`, contract section 19): the tool card as an app a host
 * renders in a sandboxed iframe. This file only says what the server offers:
 *
 * - `project_cli`'s `_meta.ui.resourceUri` (set through the ext-apps SDK's `registerAppTool`,
 *   which also writes the older flat key for hosts that read only that);
 * - the resource itself: one self-contained HTML document (`text/html;profile=mcp-app`) that
 *   `npm run build` made from the inspector's reference renderer (scripts/bundle-mcp-app.mjs),
 *   read once from dist/, served with an empty CSP (it fetches nothing);
 * - `icons` for the server and the tool: the SVGs in assets/icons/ as data: URIs, so a host
 *   shows them without fetching anything (a stdio server has no URL to fetch from).
 *
 * The card's data is not here: each `tools/call` result carries its compiled `ui_schema` in
 * `_meta["toolgate/ui_schema"]` (mcp-tool.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { McpServer } from '@modelcontextprotocol/server';
import { EXTENSION_ID, RESOURCE_MIME_TYPE, registerAppResource } from '@modelcontextprotocol/ext-apps/server';
import { PACKAGE_ROOT } from '../runtime/package-root.js';
import { TOOL_CARD_URI } from '../protocol/mcp-apps.js';

export { TOOL_CARD_URI, UI_SCHEMA_META_KEY } from '../protocol/mcp-apps.js';
export { EXTENSION_ID as MCP_APPS_EXTENSION_ID, RESOURCE_MIME_TYPE as MCP_APP_MIME_TYPE };

/** The built app (scripts/bundle-mcp-app.mjs). */
const TOOL_CARD_FILE = join(PACKAGE_ROOT, 'dist', 'mcp-app', 'tool-card.html');
const ICONS_DIR = join(PACKAGE_ROOT, 'assets', 'icons');

export interface Icon {
  src: string;
  mimeType: string;
  sizes: string[];
  theme: 'light' | 'dark';
}

/** An icon of assets/icons/ (`<name>.svg` for light backgrounds, `<name>-dark.svg` for dark ones) as data: URIs. */
function iconSet(name: string): Icon[] {
  const icon = (file: string, theme: Icon['theme']): Icon => ({
    src: `data:image/svg+xml;base64,${readFileSync(join(ICONS_DIR, file)).toString('base64')}`,
    mimeType: 'image/svg+xml',
    sizes: ['any'],
    theme,
  });
  return [icon(`${name}.svg`, 'light'), icon(`${name}-dark.svg`, 'dark')];
}

let icons: { server: Icon[]; tool: Icon[] } | undefined;
/** The server's and the tool's icons, read once (the files ship with the package). */
export function toolgateIcons(): { server: Icon[]; tool: Icon[] } {
  icons ??= { server: iconSet('toolgate'), tool: iconSet('project-cli') };
  return icons;
}

let html: string | undefined;
/** The app's HTML, read once; a checkout built without it fails the read, not the server. */
function toolCardHtml(): string {
  html ??= readFileSync(TOOL_CARD_FILE, 'utf8');
  return html;
}

/** `_meta` of `project_cli`: the app that renders its results. */
export const TOOL_UI_META = { ui: { resourceUri: TOOL_CARD_URI } } as const;

/**
 * Offers the app on a server: the extension under `capabilities.extensions`, and the resource
 * (listed, and read with `resources/read`). Its CSP declares no domain: the page fetches
 * nothing, so a host applies the extension's restrictive default.
 */
export function attachToolCardApp(server: McpServer): void {
  server.server.registerCapabilities({ extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } });
  registerAppResource(
    server,
    'toolgate tool card',
    TOOL_CARD_URI,
    {
      title: 'toolgate tool card',
      description: "Renders a project_cli result's ui_schema (the card toolgate's inspector shows) inside an MCP Apps host.",
      _meta: { ui: { prefersBorder: true } },
    },
    () => ({
      contents: [{ uri: TOOL_CARD_URI, mimeType: RESOURCE_MIME_TYPE, text: toolCardHtml(), _meta: { ui: { csp: {}, prefersBorder: true } } }],
    }),
  );
}
