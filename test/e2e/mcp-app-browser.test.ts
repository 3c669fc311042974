/**
 * The tool card as an MCP App inside a real web host (contract section 19), in headless Chromium:
 * a page that is an MCP host as the extension describes one — the official MCP client over
 * Streamable HTTP to a spawned `serve --ws` daemon, and the ext-apps SDK's host side (AppBridge)
 * rendering each result's app in the inner iframe of a sandbox proxy on another origin, under the
 * CSP the resource declares (test/fixtures/mcp-apps-host/). The page calls calendar.create,
 * calendar.read and contacts.read; the test reads each card, clicks the created event's "Delete
 * event" (a call back through the host to toolgate), sees the delete result, switches the host to dark, and checks
 * that nothing was fetched from anywhere but the host and toolgate.
 * With UPDATE_SCREENSHOTS=1 the screenshots land in docs/screenshots/.
 * Skips when /usr/bin/chromium is missing (see test/helpers/browser.ts).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import type { Browser, FrameLocator, Page } from 'playwright-core';
import { CHROMIUM_SKIP_REASON, launchBrowser } from '../helpers/browser.js';
import { openSession, startHost, type Host } from '../helpers/host.js';
import { REPO_ROOT, screenshotPath } from '../helpers/repo.js';
import { mintBearer } from '../helpers/tokens.js';

// Code passed to page.evaluate runs in the browser; the project compiles without the DOM lib.
declare const window: any;
declare const document: any;
declare const getComputedStyle: any;

const FIXTURE = join(REPO_ROOT, 'test', 'fixtures', 'mcp-apps-host');
const EVENT = { title: 'Quarterly review', start_at: '2026-07-14T09:00:00Z', end_at: '2026-07-14T10:30:00Z', location: 'Room 4B' };
const BOB = { name: 'Bob Okafor', phone: '+15550100' };

const HOST_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>MCP host</title>
<style>
  :root { color-scheme: light; --bg: #eef1f5; --fg: #1b1f24; --bubble: #ffffff; }
  :root[data-theme="dark"] { color-scheme: dark; --bg: #0f1318; --fg: #e8ecf1; --bubble: #171c23; }
  body { margin: 0; padding: 20px; background: var(--bg); color: var(--fg); font: 15px system-ui, sans-serif; }
  #chat { display: grid; gap: 16px; max-width: 600px; }
  figure { margin: 0; padding: 10px 12px; background: var(--bubble); border-radius: 12px; }
  figcaption { font-size: 12px; opacity: 0.75; margin-bottom: 6px; font-family: ui-monospace, monospace; }
  iframe { display: block; width: 560px; height: 40px; border: 0; }
</style></head>
<body><main id="chat"></main><script type="module" src="/host.js"></script></body></html>`;

const SANDBOX_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sandbox</title>
<style>html, body { margin: 0; height: 100%; background: transparent; } iframe { display: block; width: 100%; height: 100%; border: 0; }</style>
</head><body><script type="module" src="/sandbox.js"></script></body></html>`;

/** The host page and the sandbox proxy; the test reaches the proxy by another host name, hence another origin. */
async function startPages(): Promise<{ server: Server; port: number }> {
  const bundle = await build({ entryPoints: [join(FIXTURE, 'host.mjs')], bundle: true, write: false, platform: 'browser', format: 'esm', target: 'es2022', logLevel: 'warning' });
  const files: Record<string, [string, string]> = {
    '/host.html': ['text/html; charset=utf-8', HOST_PAGE],
    '/host.js': ['text/javascript; charset=utf-8', bundle.outputFiles[0]!.text],
    '/sandbox.html': ['text/html; charset=utf-8', SANDBOX_PAGE],
    '/sandbox.js': ['text/javascript; charset=utf-8', readFileSync(join(FIXTURE, 'sandbox.mjs'), 'utf8')],
  };
  const server = createServer((req, res) => {
    const file = files[new URL(req.url ?? '/', 'http://x').pathname];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': file[0], 'cache-control': 'no-store' }).end(file[1]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('the tool card as an MCP App in a web host (Chromium)', { skip: CHROMIUM_SKIP_REASON }, () => {
  let daemon: Host;
  let pages: { server: Server; port: number };
  let browser: Browser;
  let page: Page;
  let token: string;
  const requests: string[] = [];
  const cspReports: string[] = [];
  const app = (index: number): FrameLocator => page.frameLocator(`#app-${index}`).frameLocator('iframe');
  const callTool = (module: string, method: string, input: Record<string, unknown>) =>
    page.evaluate(
      ([args, sandbox]) => window.mcpHost.callTool('project_cli', args, sandbox),
      [{ module, method, input }, `http://localhost:${pages.port}/sandbox.html`] as const,
    ) as Promise<{ index: number; result: { isError?: boolean; structuredContent: Record<string, any>; _meta?: Record<string, unknown> } }>;

  before(async () => {
    daemon = await startHost({ transport: 'ws' });
    token = await mintBearer('alice', { name: 'Alice Ng' });
    // Bob exists once he has been seen: alice's contacts.read finds him by his phone.
    await openSession(await daemon.connect(), await mintBearer('bob', BOB));
    pages = await startPages();
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 660, height: 660 } });
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) cspReports.push(m.text());
    });
    await page.goto(`http://127.0.0.1:${pages.port}/host.html`);
    await page.waitForFunction(() => window.mcpHost !== undefined);
    const server = (await page.evaluate(([url, t]) => window.mcpHost.connect(url, t), [`http://127.0.0.1:${daemon.port}/mcp`, token] as const)) as {
      capabilities: { extensions?: Record<string, unknown> };
    };
    assert.ok(server.capabilities.extensions?.['io.modelcontextprotocol/ui'], 'toolgate offers MCP Apps');
  });
  after(async () => {
    await browser?.close();
    pages?.server.close();
    await daemon?.stop();
  });

  test('calendar.create, calendar.read and contacts.read each render their card in the sandboxed app', async () => {
    const created = await callTool('calendar', 'create', EVENT);
    assert.notEqual(created.result.isError, true, JSON.stringify(created.result));
    assert.ok(created.result._meta?.['toolgate/ui_schema'], 'the result carries its ui_schema');
    const card = app(created.index).getByTestId('app-card');
    await card.waitFor();
    assert.match(await card.innerText(), /Quarterly review[^]*Room 4B/);
    await app(created.index).getByRole('button', { name: 'Delete event' }).waitFor();

    const read = await callTool('calendar', 'read', { mode: 'day', date: '2026-07-14', timezone: 'UTC' });
    assert.equal(read.result.structuredContent.data.count, 1);
    await app(read.index).getByTestId('app-card').waitFor();
    assert.match(await app(read.index).getByTestId('app-card').innerText(), /Quarterly review/);

    const contacts = await callTool('contacts', 'read', { phone: BOB.phone });
    assert.equal(contacts.result.structuredContent.data.count, 1);
    await app(contacts.index).getByTestId('app-card').waitFor();
    assert.match(await app(contacts.index).getByTestId('app-card').innerText(), /Bob Okafor[^]*\+15550100/);

    // The host sized each frame from the app's own size-changed notifications.
    await page.waitForFunction(() => [...document.querySelectorAll('iframe[id^="app-"]')].every((f: any) => f.getBoundingClientRect().height > 80));
    await page.screenshot({ path: screenshotPath('mcp-app-host.png'), fullPage: true });
  });

  test('"Delete event" calls project_cli back through the host; the card becomes the delete result', async () => {
    const createdFrame = app(0);
    await createdFrame.getByRole('button', { name: 'Delete event' }).click();
    await createdFrame.getByText('Event deleted').first().waitFor();
    assert.match(await createdFrame.getByTestId('app-card').innerText(), /Deleted/);
    assert.equal(await createdFrame.getByTestId('app-card').getAttribute('data-status'), 'success');
    const after = (await page.evaluate(() =>
      window.mcpHost.call('project_cli', { module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-07-14', timezone: 'UTC' } }),
    )) as { structuredContent: { data: { count: number } } };
    assert.equal(after.structuredContent.data.count, 0, 'toolgate deleted the event');
  });

  test('the app follows the host theme; nothing is fetched but the host pages and toolgate', async () => {
    const frame = app(1);
    const colours = () => frame.locator('.tg-card').first().evaluate((n: any) => getComputedStyle(n).backgroundColor);
    const light = await colours();
    await page.evaluate(() => window.mcpHost.setTheme('dark'));
    await frame.locator('html[data-theme="dark"]').waitFor({ state: 'attached' });
    const dark = await colours();
    assert.notEqual(dark, light, 'the card is drawn in the dark palette');
    await page.screenshot({ path: screenshotPath('mcp-app-host-dark.png'), fullPage: true });

    const allowed = [`http://127.0.0.1:${pages.port}/`, `http://localhost:${pages.port}/`, `http://127.0.0.1:${daemon.port}/mcp`];
    const elsewhere = requests.filter((u) => !u.startsWith('about:') && !allowed.some((a) => u.startsWith(a)));
    assert.deepEqual(elsewhere, []);
    assert.deepEqual(cspReports, [], 'the app needs nothing its CSP refuses');
  });
});
