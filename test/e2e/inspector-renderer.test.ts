/**
 * The web inspector in a real (headless, system) Chromium:
 *  1. ui-renderer.js renders every snapshot `ui_schema` of test/snapshots/ui/*.json, keeps unknown
 *     components to a note, and shows hostile strings as text;
 *  2. the inspector app, against a scripted JSON-RPC peer on `/rpc`, opens a session from a
 *     `#token=` fragment, lists threads, replays history with tool cards, streams `tool/result`
 *     and makes a manual `project_cli` call.
 * The built files (dist/inspector/) are served by a tiny static server, as the daemon serves them.
 * Skips when /usr/bin/chromium is missing (see test/helpers/browser.ts).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CHROMIUM_SKIP_REASON, launchBrowser } from '../helpers/browser.js';
import { REPO_ROOT, screenshotPath } from '../helpers/repo.js';
import { waitFor } from '../helpers/wait-for.js';

// Code passed to page.evaluate runs in the browser. This project compiles without the DOM lib,
// so the few browser globals it names are declared here, for this module only.
declare const document: any;
declare const window: any;
declare const location: any;

let shared: Promise<Browser> | undefined;
/** The file's one Chromium, launched by the first suite that needs it; each suite has its own context. */
const sharedBrowser = (): Promise<Browser> => (shared ??= launchBrowser());
after(async () => {
  await (await shared)?.close();
});

// ---- repository, snapshots, static server --------------------------------------------------

/** The built inspector, as the daemon serves it (npm run build bundles src/inspector/ into it). */
const INSPECTOR_DIR = join(REPO_ROOT, 'dist', 'inspector');
const SNAPSHOT_DIR = join(REPO_ROOT, 'test', 'snapshots', 'ui');
const SCREENSHOT = screenshotPath('ui-renderer-event-card.png');

type Json = any; // snapshot and wire values are checked structurally below

interface SnapshotCase { file: string; name: string; uiSchema: Json }
const SNAPSHOTS: SnapshotCase[] = readdirSync(SNAPSHOT_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .flatMap((file) => {
    const cases = JSON.parse(readFileSync(join(SNAPSHOT_DIR, file), 'utf8')) as Record<string, { ui_schema: Json }>;
    return Object.entries(cases).map(([name, c]) => ({ file, name, uiSchema: c.ui_schema }));
  });
function snapshot(name: string): Json {
  const found = SNAPSHOTS.find((s) => s.name === name);
  if (!found) throw new Error(`snapshot case ${name} not found`);
  return found.uiSchema;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

const HARNESS = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ui-renderer harness</title>
<link rel="stylesheet" href="/inspector.css">
<style>body{padding:16px;background:var(--bg)} .harness-case{width:560px;padding:14px;margin-bottom:16px;background:var(--bg)}</style>
</head><body><main id="root"></main>
<script type="module">
import * as renderer from '/ui-renderer.js';
window.uiRenderer = renderer;
</script></body></html>`;

/** Serves dist/inspector/ like the daemon does (index.html at `/`, files at `/<name>`), plus the harness. */
function startStaticServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/__harness.html') {
      res.writeHead(200, { 'content-type': TYPES['.html']! });
      res.end(HARNESS);
      return;
    }
    const name = path === '/' ? 'index.html' : path.slice(1);
    const file = join(INSPECTOR_DIR, name);
    if (!/^[A-Za-z0-9_.-]+$/.test(name) || name.startsWith('.') || !existsSync(file)) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(name)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    res.end(readFileSync(file));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, origin: `http://127.0.0.1:${port}` });
    });
  });
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

// ---- expectations walked out of a ui_schema ------------------------------------------------

interface Expected {
  cards: string[];
  subtitles: string[];
  fields: Array<[string, string]>;
  badges: Array<[string, string]>;
  datetimes: Array<[string, string]>;
  lists: number[];
  emptyTexts: string[];
  texts: string[];
  actions: string[];
}

function expectedOf(uiSchema: Json): Expected {
  const e: Expected = { cards: [], subtitles: [], fields: [], badges: [], datetimes: [], lists: [], emptyTexts: [], texts: [], actions: [] };
  const walk = (c: Json): void => {
    switch (c.type) {
      case 'card':
        e.cards.push(c.title);
        if (c.subtitle) e.subtitles.push(c.subtitle);
        c.children.forEach(walk);
        break;
      case 'list':
        e.lists.push(c.items.length);
        if (c.items.length === 0) e.emptyTexts.push(c.empty_text ?? 'No items.');
        c.items.forEach(walk);
        break;
      case 'stack': c.children.forEach(walk); break;
      case 'field': e.fields.push([c.label, c.value]); break;
      case 'status_badge': e.badges.push([c.label, c.tone]); break;
      case 'datetime_range': e.datetimes.push([c.start_at, c.end_at]); break;
      case 'text': e.texts.push(c.text); break;
      case 'actions': for (const a of c.items) e.actions.push(`${a.label}|${a.module}.${a.method}|${JSON.stringify(a.input)}`); break;
      default: throw new Error(`snapshot uses unknown component ${String(c.type)}`);
    }
  };
  walk(uiSchema.component);
  return e;
}

/** Renders one ui_schema into its own section of the harness page and reads back what is shown. */
async function renderAndRead(page: Page, name: string, uiSchema: Json) {
  return page.evaluate(({ name, uiSchema }) => {
    const { renderUiSchema } = (window as any).uiRenderer;
    const section = document.createElement('section');
    section.className = 'harness-case';
    section.dataset['case'] = name;
    section.append(renderUiSchema(uiSchema));
    document.getElementById('root')!.append(section);
    const all = (id: string): any[] => Array.from(section.querySelectorAll(`[data-testid="${id}"]`));
    const text = (n: any) => n?.textContent ?? null;
    return {
      title: text(section.querySelector('[data-testid="ui-title"]')),
      cards: all('ui-card').map((c) => text(c.querySelector(':scope > header [data-testid="ui-card-title"]'))),
      subtitles: all('ui-card-subtitle').map((s) => s.textContent),
      fields: all('ui-field').map((f) => [text(f.querySelector('dt')), text(f.querySelector('dd'))]),
      badges: all('ui-badge').map((b) => [b.textContent, b.dataset['tone']]),
      datetimes: all('ui-datetime').map((d) => Array.from(d.querySelectorAll('time')).map((t: any) => t.getAttribute('datetime'))),
      datetimeTexts: all('ui-datetime').map((d) => d.textContent),
      lists: all('ui-list').map((l) => Number(l.dataset['count'])),
      emptyTexts: all('ui-list-empty').map((p) => p.textContent),
      texts: all('ui-text').map((p) => p.textContent),
      actions: all('ui-action').map((b) => `${b.textContent}|${b.dataset['module']}.${b.dataset['method']}`),
      unsupported: all('ui-unsupported').length,
      buttonsAreButtons: all('ui-action').every((b) => b.tagName === 'BUTTON' && (b as any).type === 'button'),
    };
  }, { name, uiSchema });
}

// ---- 1. the renderer ------------------------------------------------------------------------

describe('inspector ui-renderer.js in Chromium', { skip: CHROMIUM_SKIP_REASON, timeout: 120_000 }, () => {
  let context: BrowserContext;
  let page: Page;
  let server: Server;
  let origin: string;
  const pageErrors: string[] = [];
  const dialogs: string[] = [];

  before(async () => {
    ({ server, origin } = await startStaticServer());
    context = await (await sharedBrowser()).newContext({
      viewport: { width: 760, height: 900 }, deviceScaleFactor: 2, locale: 'en-US', timezoneId: 'UTC', colorScheme: 'light',
    });
    page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    page.on('dialog', (d) => { dialogs.push(d.message()); void d.dismiss(); });
    await page.goto(`${origin}/__harness.html`);
    await page.waitForFunction(() => (window as any).uiRenderer !== undefined);
  });
  after(async () => {
    await context?.close();
    if (server) await closeServer(server);
  });

  test('the snapshots cover every component type of schemas/ui-schema.json', async () => {
    const schema = JSON.parse(readFileSync(join(REPO_ROOT, 'schemas', 'ui-schema.json'), 'utf8'));
    const vocabulary = (schema.$defs.component.oneOf as Array<{ $ref: string }>).map((r) => r.$ref.split('/').pop());
    const known = await page.evaluate(() => [...(window as any).uiRenderer.COMPONENT_TYPES]);
    assert.deepEqual([...known].sort(), [...vocabulary].sort(), 'renderer and schema list the same component types');
    const used = new Set<string>();
    const walk = (c: Json): void => {
      used.add(c.type);
      for (const child of [...(c.children ?? []), ...(c.type === 'list' ? c.items : [])]) walk(child);
    };
    for (const s of SNAPSHOTS) walk(s.uiSchema.component);
    assert.deepEqual([...used].sort(), [...vocabulary].sort(), 'snapshots use every component type');
  });

  for (const s of SNAPSHOTS) {
    test(`renders snapshot ${s.file} › ${s.name}`, async () => {
      const got = await renderAndRead(page, s.name, s.uiSchema);
      const want = expectedOf(s.uiSchema);
      assert.equal(got.title, s.uiSchema.title ?? null);
      assert.deepEqual(got.cards, want.cards, 'card titles');
      assert.deepEqual(got.subtitles, want.subtitles, 'card subtitles');
      assert.deepEqual(got.fields, want.fields, 'fields (label, value)');
      assert.deepEqual(got.badges, want.badges, 'badges (label, tone)');
      assert.deepEqual(got.datetimes, want.datetimes, '<time datetime> keep the original ISO strings');
      assert.deepEqual(got.lists, want.lists, 'lists and their item counts');
      assert.deepEqual(got.emptyTexts, want.emptyTexts, 'empty lists show empty_text');
      assert.deepEqual(got.texts, want.texts, 'texts');
      assert.deepEqual(got.actions, want.actions.map((a) => a.split('|').slice(0, 2).join('|')), 'action buttons');
      assert.ok(got.buttonsAreButtons);
      assert.equal(got.unsupported, 0, 'no unsupported notes for valid schemas');
    });
  }

  test('the event card: title, fields, formatted datetime with ISO, badge; screenshot', async () => {
    const section = page.locator('section[data-case="calendar.create single"]');
    const card = section.getByTestId('ui-card');
    assert.equal(await card.count(), 1);
    assert.equal(await card.getByRole('heading', { name: 'Design review' }).count(), 1);
    assert.equal(await section.getByTestId('ui-field').filter({ hasText: 'Room 4' }).count(), 1);
    const times = section.getByTestId('ui-datetime').locator('time');
    assert.equal(await times.nth(0).getAttribute('datetime'), '2026-04-21T10:00:00+08:00');
    assert.equal(await times.nth(1).getAttribute('datetime'), '2026-04-21T11:00:00+08:00');
    // Shown at the offset it was written with, formatted by Intl.DateTimeFormat (en-US here).
    assert.match(await times.nth(0).innerText(), /Tue, Apr 21, 2026, 10:00\s?AM/);
    assert.match(await times.nth(1).innerText(), /^11:00\s?AM$/);
    assert.match(await section.getByTestId('ui-datetime').innerText(), /UTC\+08:00/);
    // The deleted-event card carries a badge.
    const deleted = page.locator('section[data-case="calendar.delete"]');
    const badge = deleted.getByTestId('ui-badge');
    assert.equal(await badge.innerText(), 'Deleted');
    assert.match((await badge.getAttribute('class')) ?? '', /\btg-tone-success\b/);

    mkdirSync(dirname(SCREENSHOT), { recursive: true });
    await section.scrollIntoViewIfNeeded();
    await section.screenshot({ path: SCREENSHOT });
    assert.ok(existsSync(SCREENSHOT));
  });

  test('datetime_range honours an IANA timezone and survives a non-date value', async () => {
    const got = await page.evaluate(() => {
      const { renderUiComponent } = (window as any).uiRenderer;
      const tz = renderUiComponent({ type: 'datetime_range', label: 'When', start_at: '2026-04-21T10:00:00+08:00', end_at: '2026-04-22T09:00:00+08:00', timezone: 'Asia/Tokyo' });
      const bad = renderUiComponent({ type: 'datetime_range', start_at: 'soon', end_at: 'later', timezone: 'Not/AZone' });
      return {
        tz: tz.textContent, tzAttrs: Array.from(tz.querySelectorAll('time')).map((t: any) => t.getAttribute('datetime')),
        bad: bad.textContent, badAttrs: Array.from(bad.querySelectorAll('time')).map((t: any) => t.getAttribute('datetime')),
      };
    });
    assert.match(got.tz, /When/);
    assert.match(got.tz, /11:00\s?AM/, 'shown in Asia/Tokyo');
    assert.match(got.tz, /Apr 22, 2026, 10:00\s?AM/, 'another day shows its date');
    assert.match(got.tz, /Asia\/Tokyo/);
    assert.deepEqual(got.tzAttrs, ['2026-04-21T10:00:00+08:00', '2026-04-22T09:00:00+08:00']);
    assert.match(got.bad, /soon – later/);
    assert.deepEqual(got.badAttrs, ['soon', 'later']);
  });

  test('unknown component types and malformed nodes render a note and never throw', async () => {
    const got = await page.evaluate(() => {
      const { renderUiSchema } = (window as any).uiRenderer;
      const results: Array<{ notes: string[]; fields: number; types: Array<string | undefined> }> = [];
      const inputs: unknown[] = [
        { version: '1', component: { type: 'card', title: 'Mixed', children: [
          { type: 'carousel', items: [] }, { type: 'field', label: 'Kept', value: 'yes' }, null, 42,
          { type: 'list', items: 'not-an-array' }, { type: 'actions', items: [{ label: 'Broken' }] },
          { type: 'status_badge', label: 'Odd tone', tone: 'purple' } ] } },
        { version: '1', component: { type: 'hologram' } },
        { version: '2', component: { type: 'card', title: 'Future', children: [] } },
        null,
        'not a schema',
        { version: '1' },
      ];
      for (const input of inputs) {
        const node = renderUiSchema(input);
        if (results.length === 0) node.dataset.case = 'malformed';
        document.getElementById('root')!.append(node);
        results.push({
          notes: Array.from(node.querySelectorAll('[data-testid="ui-unsupported"]')).map((n) => (n as any).textContent ?? ''),
          fields: node.querySelectorAll('[data-testid="ui-field"]').length,
          types: Array.from(node.querySelectorAll('[data-testid="ui-unsupported"]')).map((n) => (n as any).dataset['componentType']),
        });
      }
      const oddBadge = document.querySelector('[data-case="malformed"] [data-testid="ui-badge"]');
      return { results, oddBadge: oddBadge ? [oddBadge.textContent, oddBadge.dataset.tone] : null };
    });
    const [mixed, hologram, future, nul, str, missing] = got.results;
    assert.ok(mixed!.notes.some((n) => n.includes('carousel')), 'the unknown child is named in a note');
    assert.equal(mixed!.fields, 1, 'known siblings still render');
    assert.ok(mixed!.notes.length >= 4, `null, number and the broken action each leave a note: ${JSON.stringify(mixed!.notes)}`);
    assert.deepEqual(got.oddBadge, ['Odd tone', 'neutral'], 'an unknown tone falls back to neutral');
    assert.deepEqual(hologram!.types, ['hologram']);
    assert.equal(future!.notes.length, 1);
    assert.match(future!.notes[0]!, /version/);
    assert.equal(nul!.notes.length, 1);
    assert.equal(str!.notes.length, 1);
    assert.equal(missing!.notes.length, 1);
    assert.deepEqual(pageErrors, []);
  });

  test('markup in data is shown as text, never parsed', async () => {
    const evil = '<img src=x onerror=alert(1)>';
    const got = await page.evaluate((evil) => {
      const { renderUiSchema } = (window as any).uiRenderer;
      const node = renderUiSchema({
        version: '1', title: evil,
        component: { type: 'stack', children: [
          { type: 'card', title: evil, subtitle: evil, children: [
            { type: 'field', label: evil, value: evil },
            { type: 'status_badge', label: evil, tone: 'danger' },
            { type: 'text', text: evil, style: 'code' },
            { type: 'datetime_range', label: evil, start_at: evil, end_at: evil },
            { type: 'actions', items: [{ label: evil, kind: 'tool_call', module: evil, method: evil, input: { x: evil } }] },
          ] },
          { type: 'list', items: [], empty_text: evil },
          { type: evil },
        ] },
      });
      const section = document.createElement('section');
      section.dataset['case'] = 'xss';
      section.append(node);
      document.getElementById('root')!.append(section);
      return {
        imgs: document.querySelectorAll('img').length,
        title: section.querySelector('[data-testid="ui-card-title"]')?.textContent,
        uiTitle: section.querySelector('[data-testid="ui-title"]')?.textContent,
        badge: section.querySelector('[data-testid="ui-badge"]')?.textContent,
        empty: section.querySelector('[data-testid="ui-list-empty"]')?.textContent,
        action: section.querySelector('[data-testid="ui-action"]')?.textContent,
        occurrences: (section.textContent ?? '').split(evil).length - 1,
      };
    }, evil);
    assert.equal(got.imgs, 0, 'no <img> element was created');
    assert.equal(got.title, evil);
    assert.equal(got.uiTitle, evil);
    assert.equal(got.badge, evil);
    assert.equal(got.empty, evil);
    assert.equal(got.action, evil);
    assert.ok(got.occurrences >= 9, `the string shows up as text everywhere (${got.occurrences})`);
    await page.waitForTimeout(100);
    assert.deepEqual(dialogs, [], 'no script ran');
    assert.deepEqual(pageErrors, []);
  });

  test('choosing a suggested action reports it via onAction and a toolgate:action event', async () => {
    const got = await page.evaluate(() => {
      const { renderUiSchema } = (window as any).uiRenderer;
      const seen: unknown[] = [];
      const node = renderUiSchema(
        { version: '1', component: { type: 'actions', items: [
          { label: 'View event', kind: 'tool_call', module: 'calendar', method: 'read', input: { mode: 'event', event_id: 'evt_01' } }] } },
        { onAction: (a: unknown) => seen.push({ via: 'callback', a }) },
      );
      document.getElementById('root')!.append(node);
      document.addEventListener('toolgate:action', (ev: any) => seen.push({ via: 'event', a: (ev as any).detail }), { once: true });
      (node.querySelector('[data-testid="ui-action"]') as any).click();
      node.remove();
      return seen;
    });
    const action = { label: 'View event', module: 'calendar', method: 'read', input: { mode: 'event', event_id: 'evt_01' } };
    assert.deepEqual(got, [{ via: 'callback', a: action }, { via: 'event', a: action }]);
  });
});

// ---- 2. the app against a scripted JSON-RPC peer ---------------------------------------------

const GOOD_TOKEN = 'test-bearer-good-7f3a9c';
const BAD_TOKEN = 'test-bearer-bad-0d1e2f';

interface Received { method: string; params: Json }

/** A stand-in for the daemon's `/rpc`: enough of the contract to drive every panel. */
function attachFakeRpc(server: Server) {
  const wss = new WebSocketServer({ server, path: '/rpc' });
  const received: Received[] = [];
  const sockets = new Set<WebSocket>();
  const eventUi = snapshot('calendar.create single');
  const created: Array<{ thread_id: string; created_at: string; updated_at: string; message_count: number }> = [];
  const eventData = { event: { id: 'evt_01', owner_id: 'user_alice', title: 'Design review', start_at: '2026-04-21T10:00:00+08:00', end_at: '2026-04-21T11:00:00+08:00', location: 'Room 4', description: 'Walk through the tool UI vocabulary.' } };
  const history: Record<string, Json[]> = {
    t1: [
      { id: 'm1', role: 'user', content: 'Book a design review <b>tomorrow</b>', created_at: '2026-04-20T09:00:00.000Z' },
      { id: 'm2', role: 'tool', tool_call_id: 'call-1', status: 'success', created_at: '2026-04-20T09:00:01.000Z', ui_schema: eventUi,
        content: JSON.stringify({ status: 'success', module: 'calendar', method: 'create', data: eventData }) },
      { id: 'm3', role: 'assistant', content: 'Done: it is on your calendar.', created_at: '2026-04-20T09:00:02.000Z' },
      { id: 'm4', role: 'tool', tool_call_id: 'call-2', status: 'failure', created_at: '2026-04-20T09:01:00.000Z',
        content: JSON.stringify({ status: 'failure', error: { code: 'NOT_FOUND', message: 'event evt_9 not found', module: 'calendar', method: 'delete' } }) },
    ],
    t2: [{ id: 'm5', role: 'user', content: 'Second thread', created_at: '2026-04-19T09:00:00.000Z' }],
  };
  let sessionSeq = 0;

  const send = (ws: WebSocket, msg: Json) => ws.send(JSON.stringify(msg));
  const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

  async function handle(ws: WebSocket, method: string, params: Json): Promise<Json> {
    switch (method) {
      case 'initialize':
        return { protocol_version: '1', server_info: { name: 'toolgate', version: '0.1.0-test' }, capabilities: {},
          tool: { name: 'project_cli', description: 'd', input_schema: { type: 'object' } } };
      case 'session/open':
        if (params?.auth?.token !== GOOD_TOKEN) throw { code: -32001, message: 'Unauthorized' };
        return { session_id: `s-${++sessionSeq}`, user_id: 'user_alice', enabled_skills: ['calendar', 'memory'],
          allowed_actions: ['calendar.*', 'memory.update'] };
      case 'thread/list':
        return { threads: [
          ...created,
          { thread_id: 't1', created_at: '2026-04-20T09:00:00.000Z', updated_at: '2026-04-20T09:01:00.000Z', message_count: 4 },
          { thread_id: 't2', created_at: '2026-04-19T09:00:00.000Z', updated_at: '2026-04-19T09:00:00.000Z', message_count: 1 },
        ], next_cursor: null };
      case 'history/get': {
        const messages = history[params.thread_id];
        if (!messages) throw { code: -32602, message: 'Invalid params', data: { code: 'THREAD_NOT_FOUND' } };
        return { messages, next_before: null };
      }
      case 'thread/subscribe':
      case 'thread/unsubscribe':
        return {};
      case 'tool/invoke': {
        const { thread_id, tool_call_id, args } = params;
        const base = { thread_id, tool_call_id, tool_name: 'project_cli', tool_call_args: args };
        if (!history[thread_id]) {
          history[thread_id] = [];
          created.unshift({ thread_id, created_at: '2026-04-21T00:00:00.000Z', updated_at: '2026-04-21T00:00:00.000Z', message_count: 1 });
        }
        if (args.module === 'calendar' && args.method === 'create' && Array.isArray(args.input.items)) {
          const items = args.input.items as Json[];
          const outcomes: Json[] = [];
          for (let index = 0; index < items.length; index++) {
            const ok = typeof items[index].title === 'string';
            const data = ok ? { index, ok, event: { ...eventData.event, id: `evt_b${index}`, title: items[index].title } }
              : { index, ok, error: { code: 'INVALID_ACTION_INPUT', message: 'title: required' } };
            outcomes.push(data);
            send(ws, { jsonrpc: '2.0', method: 'tool/result', params: { ...base, status: 'partial', final: false,
              result: { module: 'calendar', method: 'create', data },
              ui_schema: snapshot(ok ? 'calendar.create batch item ok' : 'calendar.create batch item failed') } });
            await delay(30);
          }
          const data = { items: outcomes, created: outcomes.filter((o) => o.ok).length, failed: outcomes.filter((o) => !o.ok).length };
          send(ws, { jsonrpc: '2.0', method: 'tool/result', params: { ...base, status: 'partial', final: true,
            result: { module: 'calendar', method: 'create', data }, ui_schema: snapshot('calendar.create batch partial') } });
          return { tool_call_id, status: 'partial', content: [{ type: 'text', text: JSON.stringify({ status: 'partial', module: 'calendar', method: 'create', data }) }] };
        }
        if (args.module === 'calendar' && args.method === 'delete') {
          const error = { code: 'NOT_FOUND', message: `event ${String(args.input.event_id)} not found`, module: 'calendar', method: 'delete' };
          send(ws, { jsonrpc: '2.0', method: 'tool/result', params: { ...base, status: 'failure', final: true, error } });
          return { tool_call_id, status: 'failure', content: [{ type: 'text', text: JSON.stringify({ status: 'failure', error }) }] };
        }
        send(ws, { jsonrpc: '2.0', method: 'tool/result', params: { ...base, status: 'success', final: true,
          result: { module: args.module, method: args.method, data: eventData }, ui_schema: eventUi } });
        return { tool_call_id, status: 'success', content: [{ type: 'text', text: JSON.stringify({ status: 'success', module: args.module, method: args.method, data: eventData }) }] };
      }
      default:
        throw { code: -32601, message: `Method not found: ${method}` };
    }
  }

  wss.on('connection', (ws) => {
    sockets.add(ws);
    ws.on('close', () => sockets.delete(ws));
    ws.on('message', (raw) => {
      const msg = JSON.parse(String(raw));
      received.push({ method: msg.method, params: msg.params });
      if (msg.id === undefined) return;
      handle(ws, msg.method, msg.params).then(
        (result) => send(ws, { jsonrpc: '2.0', id: msg.id, result }),
        (error) => send(ws, { jsonrpc: '2.0', id: msg.id, error }),
      );
    });
  });

  /** A notification as if another connection had made the call. */
  function push(params: Json) {
    for (const ws of sockets) send(ws, { jsonrpc: '2.0', method: 'tool/result', params });
  }
  return { wss, received, push };
}

describe('inspector app against a scripted JSON-RPC peer', { skip: CHROMIUM_SKIP_REASON, timeout: 120_000 }, () => {
  let context: BrowserContext;
  let server: Server;
  let origin: string;
  let rpc: ReturnType<typeof attachFakeRpc>;
  let page: Page;
  const pageErrors: string[] = [];
  const consoleLines: string[] = [];

  before(async () => {
    ({ server, origin } = await startStaticServer());
    rpc = attachFakeRpc(server);
    context = await (await sharedBrowser()).newContext({ viewport: { width: 1400, height: 1000 }, locale: 'en-US', timezoneId: 'UTC' });
    page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    page.on('console', (m) => consoleLines.push(m.text()));
  });
  after(async () => {
    await context?.close();
    rpc?.wss.close();
    if (server) await closeServer(server);
  });

  test('a #token= fragment opens the session, then leaves the address bar and the page', async () => {
    await page.goto(`${origin}/#token=${GOOD_TOKEN}`);
    await page.getByTestId('session-user').filter({ hasText: 'user_alice' }).waitFor();
    const init = rpc.received.find((r) => r.method === 'initialize');
    assert.deepEqual(init?.params, { protocol_version: '1', client_info: { name: 'toolgate-inspector', version: '1' } });
    const open = rpc.received.find((r) => r.method === 'session/open');
    assert.deepEqual(open?.params, { auth: { type: 'bearer', token: GOOD_TOKEN } });
    assert.ok(!page.url().includes(GOOD_TOKEN), 'the fragment is gone from the URL');
    assert.equal(await page.evaluate(() => location.hash), '');
    assert.equal(await page.getByTestId('token-input').inputValue(), '');
    assert.ok(!(await page.content()).includes(GOOD_TOKEN), 'the token is nowhere in the DOM');
    assert.match(await page.getByTestId('session-actions').innerText(), /calendar\.\*/);
    // allowed_actions become suggestions: calendar.* expands to the known calendar methods.
    const methods = await page.evaluate(() => Array.from(document.querySelectorAll('#method-options option')).map((o) => (o as any).value));
    assert.ok(methods.includes('create') && methods.includes('accept_invite') && methods.includes('update'), methods.join(','));
  });

  test('threads are listed and a thread replays its history with tool cards, then subscribes', async () => {
    const list = page.getByTestId('thread-list');
    await list.getByTestId('thread-item').first().waitFor();
    assert.deepEqual(await list.getByTestId('thread-item').evaluateAll((els) => els.map((e) => (e as any).dataset['threadId'])), ['t1', 't2']);
    assert.match(await list.locator('[data-thread-id="t1"]').innerText(), /4 messages/);
    await list.locator('[data-thread-id="t1"]').click();
    const messages = page.getByTestId('message-list');
    const card = messages.locator('[data-testid="tool-card"][data-tool-call-id="call-1"]');
    await card.waitFor();
    assert.equal(await card.getAttribute('data-status'), 'success');
    assert.equal(await card.getByTestId('ui-card').getByRole('heading', { name: 'Design review' }).count(), 1);
    assert.equal(await card.getByTestId('ui-datetime').locator('time').first().getAttribute('datetime'), '2026-04-21T10:00:00+08:00');
    const raw = await card.getByTestId('tool-card-raw').textContent();
    assert.match(raw ?? '', /^\{"status":"success","module":"calendar","method":"create"/, 'raw content is the projection text as stored');
    assert.equal(await card.locator('details').getAttribute('open'), null, 'raw content is collapsed when a UI exists');
    // Messages oldest first, user text shown as text (markup not parsed).
    const roles = await messages.locator(':scope > li').evaluateAll((els) => els.map((e) => (e as any).dataset['role']));
    assert.deepEqual(roles, ['user', 'tool', 'assistant', 'tool']);
    assert.equal(await messages.locator('b').count(), 0);
    assert.match(await messages.locator('[data-role="user"]').innerText(), /<b>tomorrow<\/b>/);
    // A failed tool message shows its error code and message.
    const failed = messages.locator('[data-testid="tool-card"][data-tool-call-id="call-2"]');
    assert.equal(await failed.getAttribute('data-status'), 'failure');
    assert.equal(await failed.getByTestId('tool-error-code').innerText(), 'NOT_FOUND');
    assert.match(await failed.getByTestId('tool-error-message').innerText(), /evt_9 not found/);
    assert.match(await failed.locator('h3').innerText(), /^calendar\.delete$/);
    // history/get asked for the ui view; then thread/subscribe.
    await waitFor(() => rpc.received.some((r) => r.method === 'thread/subscribe' && r.params.thread_id === 't1'), 'thread/subscribe of t1', 5000, 20);
    const hist = rpc.received.find((r) => r.method === 'history/get');
    assert.equal(hist?.params.view, 'ui');
    assert.equal(hist?.params.thread_id, 't1');
    assert.equal(await page.getByTestId('call-thread').inputValue(), 't1', 'the call form follows the selected thread');
    assert.equal(await list.locator('[data-thread-id="t1"]').getAttribute('aria-current'), 'true');
  });

  test('a tool/result from another connection appears live on the selected thread', async () => {
    rpc.push({ thread_id: 't1', tool_call_id: 'other-1', tool_name: 'project_cli', tool_call_args: { module: 'memory', method: 'update', input: { key: 'standup', content: 'x' } },
      status: 'success', final: true, result: { module: 'memory', method: 'update', data: {} }, ui_schema: snapshot('memory.update') });
    rpc.push({ thread_id: 't2', tool_call_id: 'elsewhere-1', tool_name: 'project_cli', tool_call_args: { module: 'memory', method: 'update', input: {} },
      status: 'success', final: true, result: { module: 'memory', method: 'update', data: {} } });
    const card = page.locator('[data-testid="tool-card"][data-tool-call-id="other-1"]');
    await card.waitFor();
    assert.equal(await card.getAttribute('data-status'), 'success');
    assert.match(await card.innerText(), /memory\.update/);
    assert.match(await card.innerText(), /Memory saved/);
    assert.equal(await page.locator('[data-tool-call-id="elsewhere-1"]').count(), 0, 'other threads do not show here');
    await page.getByTestId('live-region').filter({ hasText: 'memory.update success' }).first().waitFor();
  });

  test('the call form validates JSON, streams a batch on a new thread and refreshes threads', async () => {
    await page.getByTestId('call-module').fill('calendar');
    await page.getByTestId('call-method').fill('create');
    await page.getByTestId('call-input').fill('{"items": [');
    assert.match(await page.getByTestId('call-input-error').innerText(), /not valid JSON/);
    assert.equal(await page.getByTestId('call-input').getAttribute('aria-invalid'), 'true');
    await page.getByTestId('call-input').fill('[1, 2]');
    assert.match(await page.getByTestId('call-input-error').innerText(), /must be a JSON object/);
    const invokesBefore = rpc.received.filter((r) => r.method === 'tool/invoke').length;
    await page.getByTestId('call-submit').click();
    assert.match(await page.getByTestId('call-status').innerText(), /Fix the input JSON/);
    assert.equal(rpc.received.filter((r) => r.method === 'tool/invoke').length, invokesBefore, 'invalid input is not sent');

    await page.getByTestId('call-input').fill(JSON.stringify({ items: [
      { title: 'A', start_at: '2026-04-21T10:00:00+08:00', end_at: '2026-04-21T11:00:00+08:00' },
      { start_at: 'x', end_at: 'y' },
      { title: 'C', start_at: '2026-04-21T12:00:00+08:00', end_at: '2026-04-21T13:00:00+08:00' } ] }));
    assert.equal(await page.getByTestId('call-input-error').isHidden(), true);
    await page.getByTestId('call-thread').fill('t-new');
    const toolCallId = await page.getByTestId('call-tool-call-id').inputValue();
    assert.match(toolCallId, /^insp-\d+$/);
    await page.getByTestId('call-submit').click();
    await page.getByTestId('call-status').filter({ hasText: 'Response: partial' }).waitFor();
    const invoke = rpc.received.filter((r) => r.method === 'tool/invoke').pop();
    assert.equal(invoke?.params.thread_id, 't-new');
    assert.equal(invoke?.params.tool_call_id, toolCallId);
    assert.deepEqual(Object.keys(invoke?.params.args), ['module', 'method', 'input']);
    assert.equal(invoke?.params.args.input.items.length, 3);
    assert.match(invoke?.params.session_id, /^s-/);
    const card = page.locator(`[data-testid="tool-card"][data-tool-call-id="${toolCallId}"]`);
    assert.equal(await card.getAttribute('data-status'), 'partial');
    assert.equal(await card.getAttribute('data-final'), 'true');
    assert.equal(await card.getByTestId('tool-card-partial').count(), 3, 'one streamed item per batch item');
    assert.match(await card.getByTestId('tool-card-main').innerText(), /Created 2 of 3 events/);
    assert.match(await card.getByTestId('tool-card-raw').textContent() ?? '', /^\{"status":"partial"/);
    // Switching threads keeps t1 watched (a call in it awaiting approval must still reach the page);
    // the new thread now shows in the list and is subscribed.
    assert.ok(!rpc.received.some((r) => r.method === 'thread/unsubscribe' && r.params.thread_id === 't1'));
    await page.locator('[data-testid="thread-item"][data-thread-id="t-new"]').filter({ hasText: '1 message' }).waitFor();
    await waitFor(() => rpc.received.some((r) => r.method === 'thread/subscribe' && r.params.thread_id === 't-new'), 'thread/subscribe of t-new', 5000, 20);
    assert.notEqual(await page.getByTestId('call-tool-call-id').inputValue(), toolCallId, 'a fresh tool_call_id for the next call');
  });

  test('an action button of a rendered card fills the call form; a failure shows its error', async () => {
    const card = page.locator('[data-testid="tool-card"][data-status="partial"]').last();
    await card.getByTestId('tool-card-main').getByRole('button', { name: 'Delete event' }).first().click();
    assert.equal(await page.getByTestId('call-module').inputValue(), 'calendar');
    assert.equal(await page.getByTestId('call-method').inputValue(), 'delete');
    assert.deepEqual(JSON.parse(await page.getByTestId('call-input').inputValue()), { event_id: 'evt_01' });
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'call-submit');
    await page.keyboard.press('Enter');
    await page.getByTestId('call-status').filter({ hasText: 'Response: failure' }).waitFor();
    assert.match(await page.getByTestId('call-status').innerText(), /NOT_FOUND: event evt_01 not found/);
    const failed = page.locator('[data-testid="tool-card"][data-status="failure"]').last();
    assert.equal(await failed.getByTestId('tool-error-code').innerText(), 'NOT_FOUND');
  });

  test('landmarks, labels and keyboard basics', async () => {
    assert.equal(await page.getByRole('banner').count(), 1);
    assert.equal(await page.locator('main').count(), 1);
    assert.equal(await page.getByRole('navigation', { name: 'Threads' }).count(), 1);
    for (const name of ['Session', 'Messages', 'Call project_cli']) {
      assert.equal(await page.getByRole('region', { name }).count(), 1, `region ${name}`);
    }
    assert.equal(await page.locator('[aria-live="polite"]').count() >= 1, true);
    const unlabeled = await page.evaluate(() => Array.from(document.querySelectorAll('input, textarea, select'))
      .filter((e: any) => e.labels?.length === 0 && !e.getAttribute('aria-label')).map((e: any) => e.id));
    assert.deepEqual(unlabeled, []);
    const t2 = page.locator('[data-testid="thread-item"][data-thread-id="t2"]');
    await t2.focus();
    // The list is rebuilt when calls finish (and on refresh): the keyboard's focus stays on t2's button.
    const before = await t2.elementHandle();
    await page.locator('#refresh-threads').dispatchEvent('click'); // a click event that does not move focus
    await page.waitForFunction((el) => !el!.isConnected, before);
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-thread-id')), 't2', 'focus survives the rebuild');
    await page.keyboard.press('Enter');
    await page.getByTestId('message-list').filter({ hasText: 'Second thread' }).waitFor();
    assert.deepEqual(pageErrors, []);
    assert.ok(!consoleLines.some((l) => l.includes(GOOD_TOKEN)), 'the token is never logged');
    const shot = process.env['INSPECTOR_APP_SCREENSHOT']; // opt-in: a picture of the whole app
    if (shot) {
      await page.locator('[data-testid="thread-item"][data-thread-id="t1"]').click();
      await page.locator('[data-testid="tool-card"]').first().waitFor();
      await page.screenshot({ path: shot, fullPage: true });
    }
  });

  test('a refused token shows the JSON-RPC error, not the token', async () => {
    const other = await context.newPage();
    await other.goto(`${origin}/`);
    await other.getByTestId('connection-status').filter({ hasText: 'Connected' }).waitFor();
    await other.getByTestId('token-input').fill(BAD_TOKEN);
    await other.getByTestId('open-session').click();
    const error = other.getByTestId('session-error');
    await error.filter({ hasText: '-32001' }).waitFor();
    assert.ok(!(await error.innerText()).includes(BAD_TOKEN));
    assert.equal(await other.getByTestId('token-input').inputValue(), '', 'the field is cleared once used');
    assert.ok(!(await other.content()).includes(BAD_TOKEN));
    await other.close();
  });
});
