/**
 * MCP Apps (contract section 19) on every MCP transport, in process: stdio (`serve --mcp`'s
 * server over in-memory pipes) and Streamable HTTP on the binary's own listener, sessionful
 * (2025-11-25) and sessionless (2026-07-28), each through the SDK's client:
 * - the extension is advertised; `project_cli` names the app in `_meta.ui.resourceUri`;
 * - `resources/read` of the app is one self-contained HTML document as the extension requires;
 * - a result of an action with a UI carries its compiled `ui_schema` in
 *   `_meta["toolgate/ui_schema"]` — the one history's `ui` view holds — and the text and
 *   `structuredContent` stay what they were; a refused call carries none;
 * - the server and the tool carry `icons`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  McpUiResourceMetaSchema,
  McpUiToolMetaSchema,
  McpUiToolResultNotificationSchema,
  RESOURCE_MIME_TYPE,
} from '@modelcontextprotocol/ext-apps';
import type { Client as McpClient } from '@modelcontextprotocol/client';
import { startInProcess, startMcpInProcess, type InProcessHost, type InProcessMcp } from '../../helpers/in-process.js';
import { connectMcp, MCP_KINDS, type McpHost } from '../../helpers/mcp-hosts.js';
import { openSession } from '../../helpers/host.js';
import { mintBearer } from '../../helpers/tokens.js';
import { validateUiSchema } from '../../helpers/ui-schema-validator.js';
import type { HistoryMessage, ToolResponse } from '../../../src/protocol/index.js';

const APP_URI = 'ui://toolgate/tool-card.html';
const UI_META = 'toolgate/ui_schema';
const EVENT = { title: 'Card review', start_at: '2026-06-02T09:00:00Z', end_at: '2026-06-02T09:30:00Z', location: 'Room 4' };

interface Called {
  content: ToolResponse['content'];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

for (const kind of MCP_KINDS) {
  describe(`MCP Apps over ${kind}`, () => {
    let ws: InProcessHost;
    let stdio: InProcessMcp | undefined;
    let http: McpHost | undefined;
    let client: McpClient;
    let wsSession: string;
    const user = `ada-${kind}`;
    const call = async (args: unknown, thread: string) =>
      (await client.callTool({ name: 'project_cli', arguments: args as Record<string, unknown>, _meta: { 'toolgate/thread_id': thread } })) as Called;

    before(async () => {
      const token = await mintBearer(user, { name: 'Ada' });
      ws = await startInProcess({ transport: 'ws' });
      wsSession = (await openSession(ws, token)).session_id;
      if (kind === 'stdio') {
        // serve --mcp on the ws daemon's database: history is shared through it.
        stdio = await startMcpInProcess(token, { db: ws.dbPath, dataDir: ws.dataDir });
        client = stdio.client;
      } else {
        http = await connectMcp(kind, { token, port: ws.port! });
        client = http.client;
      }
    });
    after(async () => {
      await http?.close();
      await stdio?.stop();
      await ws.stop();
    });

    test('initialize advertises io.modelcontextprotocol/ui beside the Skills extension; the server has icons', () => {
      const caps = client.getServerCapabilities() as { extensions?: Record<string, { mimeTypes?: string[] }> };
      assert.deepEqual(caps.extensions?.['io.modelcontextprotocol/ui'], { mimeTypes: [RESOURCE_MIME_TYPE] });
      assert.ok(caps.extensions?.['io.modelcontextprotocol/skills'], 'the Skills extension is still there');
      assertIcons(client.getServerVersion()?.icons);
    });

    test('tools/list: project_cli names the app in _meta.ui.resourceUri (and the flat key older hosts read) and has icons', async () => {
      const { tools } = await client.listTools();
      assert.equal(tools.length, 1);
      const tool = tools[0]!;
      const ui = McpUiToolMetaSchema.parse((tool._meta as { ui?: unknown } | undefined)?.ui);
      assert.equal(ui.resourceUri, APP_URI);
      assert.equal(ui.visibility, undefined, 'visible to the model and the app alike');
      assert.equal(tool._meta?.['ui/resourceUri'], APP_URI);
      assertIcons(tool.icons);
    });

    test('resources/read of the app: one self-contained HTML document, text/html;profile=mcp-app, no network', async () => {
      const { resources } = await client.listResources();
      const listed = resources.find((r) => r.uri === APP_URI);
      assert.ok(listed, 'the app is listed');
      assert.equal(listed.mimeType, RESOURCE_MIME_TYPE);

      const { contents } = await client.readResource({ uri: APP_URI });
      assert.equal(contents.length, 1);
      const app = contents[0] as { uri: string; mimeType: string; text: string; _meta?: { ui?: unknown } };
      assert.equal(app.uri, APP_URI);
      assert.equal(app.mimeType, RESOURCE_MIME_TYPE);
      const meta = McpUiResourceMetaSchema.parse(app._meta?.ui);
      assert.deepEqual(meta.csp, {}, 'no domain declared: the restrictive default CSP');
      assert.match(app.text, /^<!doctype html>/i);
      assert.match(app.text, /<\/html>\s*$/);
      assert.doesNotMatch(app.text, /<(script|img|iframe)[^>]+src=|<link[^>]+href=|@import\s+url/i, 'nothing loaded from elsewhere');
      assert.match(app.text, /<script type="module">[^]*ui\/initialize/, 'the ext-apps SDK is inlined');
      assert.match(app.text, /\.tg-card\{/, "the renderer's styles are inlined");
    });

    test('tools/call: a result with a UI carries the compiled ui_schema — the one history holds; text and structuredContent unchanged', async () => {
      const thread = `apps-${kind}`;
      const created = await call({ module: 'calendar', method: 'create', input: EVENT }, thread);
      assert.notEqual(created.isError, true, JSON.stringify(created));
      assert.equal(created.content[0]!.text, JSON.stringify(created.structuredContent), 'the text is the JSON of structuredContent');
      // (2026-07-28 results carry the SDK's own `io.modelcontextprotocol/serverInfo` beside it.)
      assert.deepEqual(Object.keys(created._meta ?? {}).filter((k) => k.startsWith('toolgate/')), [UI_META]);
      const ui = created._meta![UI_META] as { component: unknown };
      assert.deepEqual(validateUiSchema(ui), { ok: true });
      assert.match(JSON.stringify(ui), /Card review/);
      assert.match(JSON.stringify(ui), /"method":"delete"/, 'the card offers its delete action');
      // What a host hands the app (ui/notifications/tool-result) is this very result.
      McpUiToolResultNotificationSchema.parse({ method: 'ui/notifications/tool-result', params: created });

      const history = await ws.request<{ messages: HistoryMessage[] }>('history/get', { session_id: wsSession, thread_id: thread, view: 'ui' });
      const stored = history.messages.filter((m) => m.role === 'tool');
      assert.equal(stored.length, 1);
      assert.equal(stored[0]!.content, created.content[0]!.text);
      assert.deepEqual(stored[0]!.ui_schema, ui, 'the card the inspector draws');
    });

    test('a call refused before it runs carries no ui_schema', async () => {
      const refused = await call({ module: 'calendar', method: 'nope', input: {} }, `apps-refused-${kind}`);
      assert.equal(refused.isError, true);
      assert.equal(refused._meta?.[UI_META], undefined);
    });
  });
}

function assertIcons(icons: Array<{ src: string; mimeType?: string; theme?: string }> | undefined): void {
  assert.ok(icons && icons.length === 2, `two icons, got ${JSON.stringify(icons)?.slice(0, 120)}`);
  assert.deepEqual(icons.map((i) => i.theme).sort(), ['dark', 'light']);
  for (const icon of icons) {
    assert.equal(icon.mimeType, 'image/svg+xml');
    assert.match(icon.src, /^data:image\/svg\+xml;base64,/);
    assert.match(Buffer.from(icon.src.split(',')[1]!, 'base64').toString('utf8'), /^<svg /);
  }
}
