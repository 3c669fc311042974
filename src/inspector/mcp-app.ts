/**
 * The tool card as an MCP App (contract section 19): the page a host that speaks the MCP Apps
 * extension loads from `ui://toolgate/tool-card.html` into a sandboxed iframe, talking to it over
 * postMessage through the ext-apps SDK's `App`. scripts/bundle-mcp-app.mjs inlines this module, its
 * styles and the SDK into one HTML document; the card itself is drawn by the inspector's reference
 * renderer (ui-renderer.ts), so a host shows the very card the inspector shows.
 *
 * - A `project_cli` result the host hands over (`ui/notifications/tool-result`) is drawn from its
 *   `_meta["toolgate/ui_schema"]`; a failure shows its code, message and input issues; a result
 *   without a UI says what ran and how it ended.
 * - A card's action (Delete event, View event: whatever the ui_schema offers) calls `project_cli` back through the host
 *   (`tools/call`), which forwards it to toolgate: the same whitelist, approval and quotas as any
 *   call. Its result replaces the card.
 * - The host's theme, style variables, fonts, locale and container size are followed as they
 *   change (`ui/notifications/host-context-changed`); the SDK reports the page's size back.
 *
 * Everything from the result is untrusted and reaches the page as text (the renderer's rule).
 */
import {
  App,
  applyDocumentTheme,
  applyHostFonts,
  applyHostStyleVariables,
  type McpUiHostContext,
} from '@modelcontextprotocol/ext-apps';
import { TOOL_NAME } from '../protocol/limits.js';
import { UI_SCHEMA_META_KEY } from '../protocol/mcp-apps.js';
import { el, isObject, str } from './dom.js';
import { renderToolError } from './tool-card.js';
import { renderUiSchema, type ChosenAction } from './ui-renderer.js';

interface ToolResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

const root = document.getElementById('card') as HTMLElement;
const app = new App({ name: 'toolgate-tool-card', version: '1' }, {}, { autoResize: true });
let locale: string | undefined;

/** One status line above the card: what is running, or what went wrong with the host. */
function status(text: string, state: 'pending' | 'error' | '' = ''): void {
  let line = root.querySelector<HTMLElement>('[data-testid="app-status"]');
  if (!line) {
    line = el('p', 'tg-app-status');
    line.dataset['testid'] = 'app-status';
    line.setAttribute('role', 'status');
    root.prepend(line);
  }
  line.textContent = text;
  line.dataset['state'] = state;
  line.hidden = text === '';
}

/** The card of one `project_cli` result, in place of the one shown. */
function show(result: ToolResult): void {
  const ui = result._meta?.[UI_SCHEMA_META_KEY];
  const projection = isObject(result.structuredContent) ? result.structuredContent : {};
  const body = el('div', 'tg-app-body');
  body.dataset['testid'] = 'app-card';
  body.dataset['status'] = str(projection['status']) || (result.isError ? 'failure' : '');
  if (ui !== undefined) {
    body.append(renderUiSchema(ui, { onAction: (a) => void runAction(a), headingLevel: 2, ...(locale ? { locale } : {}) }));
  } else if (isObject(projection['error'])) {
    body.append(renderToolError(projection['error']));
  } else {
    const what = [str(projection['module']), str(projection['method'])].filter(Boolean).join('.') || TOOL_NAME;
    body.append(el('p', 'tg-app-note', `${what}: ${str(projection['status']) || (result.isError ? 'failure' : 'done')}`));
  }
  root.replaceChildren(body);
}

/** A card's action, called back through the host; its result becomes the card. */
async function runAction(action: ChosenAction): Promise<void> {
  const buttons = [...root.querySelectorAll<HTMLButtonElement>('button')];
  for (const b of buttons) b.disabled = true;
  status(`${action.label}…`, 'pending');
  try {
    const result = await app.callServerTool({ name: TOOL_NAME, arguments: { module: action.module, method: action.method, input: action.input } });
    show(result as ToolResult);
  } catch (err) {
    for (const b of buttons) b.disabled = false;
    status(`${action.label} failed: ${err instanceof Error ? err.message : String(err)}`, 'error');
  }
}

/** The host's context, whole (from `ui/initialize`) or the part that changed. */
function follow(ctx: Partial<McpUiHostContext> | undefined): void {
  if (!ctx) return;
  if (ctx.theme) applyDocumentTheme(ctx.theme);
  if (ctx.styles?.variables) applyHostStyleVariables(ctx.styles.variables);
  if (ctx.styles?.css?.fonts) applyHostFonts(ctx.styles.css.fonts);
  if (ctx.locale) locale = ctx.locale;
  const dims = ctx.containerDimensions;
  if (dims) {
    // A fixed side fills the container; a flexible one grows with the card up to its maximum.
    const html = document.documentElement.style;
    html.height = 'height' in dims ? '100vh' : '';
    html.maxHeight = 'maxHeight' in dims && dims.maxHeight ? `${dims.maxHeight}px` : '';
    html.width = 'width' in dims ? '100vw' : '';
    html.maxWidth = 'maxWidth' in dims && dims.maxWidth ? `${dims.maxWidth}px` : '';
  }
  const inset = ctx.safeAreaInsets;
  if (inset) document.body.style.padding = `${inset.top}px ${inset.right}px ${inset.bottom}px ${inset.left}px`;
}

app.ontoolinput = ({ arguments: args }) => {
  const call = isObject(args) ? [str(args['module']), str(args['method'])].filter(Boolean).join('.') : '';
  status(call ? `Running ${call}…` : 'Running…', 'pending');
};
app.ontoolresult = (result) => show(result as ToolResult);
app.ontoolcancelled = ({ reason }) => status(`Cancelled${reason ? `: ${reason}` : ''}`, 'error');
app.onhostcontextchanged = (ctx) => follow(ctx);
app.onteardown = async () => ({});

app
  .connect()
  .then(() => follow(app.getHostContext()))
  .catch((err: unknown) => status(`Could not reach the host: ${err instanceof Error ? err.message : String(err)}`, 'error'));
