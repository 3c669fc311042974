/**
 * The inspector against a real daemon, in Chromium:
 *  - at 1280 px, a person opens it from `serve --ws`, pastes a token, creates an event through the
 *    form, sees its card rendered from ui_schema, reloads (which signs out, by design) and sees it
 *    replayed from history; axe finds nothing;
 *  - at 390 px, opened from a `#token=` link: the conversation comes first, a failed call shows its
 *    input issue plainly, nothing 404s (favicon included), axe finds nothing, and sign-out ends the
 *    session and its connection;
 * and, without a browser, `npm run inspector`'s launcher prints a ready link whose token the daemon
 * accepts and never logs.
 *
 * One Chromium serves the file, a fresh context per test. The daemons of the first and third tests
 * run in this process on their real listener, calls on the in-process executor (the page is what
 * they check); the second keeps a spawned `serve --ws`, whose whole stderr it scans for the token.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { openSession, startHost } from '../helpers/host.js';
import { startInProcess } from '../helpers/in-process.js';
import { mintBearer } from '../helpers/tokens.js';
import { REPO_ROOT, screenshotPath, tempDir } from '../helpers/repo.js';
import { CHROMIUM_SKIP_REASON, launchBrowser } from '../helpers/browser.js';
import { waitFor } from '../helpers/wait-for.js';

let shared: Promise<Browser> | undefined;
/** The file's one Chromium, launched by the first test that needs it. */
const sharedBrowser = (): Promise<Browser> => (shared ??= launchBrowser());
after(async () => {
  await (await shared)?.close();
});

// Code passed to page.evaluate runs in the browser; this project compiles without the DOM lib.
declare const document: any;

async function axeViolations(page: Page): Promise<Array<{ id: string; impact: string; nodes: number }>> {
  await page.addScriptTag({ path: join(REPO_ROOT, 'node_modules', 'axe-core', 'axe.min.js') });
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }).axe;
    return (await axe.run()).violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
  });
}

test('create an event through the inspector, see its card, reload and see it replayed', { skip: CHROMIUM_SKIP_REASON, timeout: 90_000 }, async () => {
  const host = await startInProcess({ transport: 'ws' });
  let context: BrowserContext | undefined;
  try {
    const token = await mintBearer('alice', { name: 'Alice' });
    // bypassCSP only so the test can inject axe-core; the page itself runs under its CSP otherwise.
    context = await (await sharedBrowser()).newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));

    await page.goto(`http://127.0.0.1:${host.port}/`);
    assert.match(await page.getByTestId('token-help').innerText(), /reloading the page signs you out/, 'the page says where the token is pasted');
    await page.getByTestId('token-input').fill(token);
    await page.getByTestId('open-session').click();
    await page.getByTestId('session-user').filter({ hasText: 'alice' }).waitFor();

    await page.getByTestId('call-module').fill('calendar');
    await page.getByTestId('call-method').fill('create');
    await page.getByTestId('call-thread').fill('inspector-thread');
    await page.getByTestId('call-input').fill(
      JSON.stringify({ title: 'Design review', start_at: '2026-04-21T10:00:00+08:00', end_at: '2026-04-21T11:00:00+08:00', location: 'Room 3' }),
    );
    await page.getByTestId('call-submit').click();
    const card = page.locator('[data-testid="tool-card"][data-status="success"]');
    await card.first().waitFor();
    await card.first().getByTestId('ui-card').filter({ hasText: 'Design review' }).first().waitFor();
    assert.ok(await card.first().getByTestId('ui-datetime').count() > 0, 'the card shows the time range');

    await page.screenshot({ path: screenshotPath('inspector-live-call.png') });

    // Reload: the token is gone from memory (by design), so open the session again, then replay the thread.
    await page.reload();
    assert.equal(await page.getByTestId('session-info').isHidden(), true, 'reloading signed out');
    await page.getByTestId('token-input').fill(token);
    await page.getByTestId('open-session').click();
    await page.locator('[data-testid="thread-item"][data-thread-id="inspector-thread"]').click();
    const replayed = page.locator('[data-testid="message-list"] [data-testid="tool-card"]');
    await replayed.first().getByTestId('ui-card').filter({ hasText: 'Design review' }).first().waitFor();
    await page.screenshot({ path: screenshotPath('inspector-replay.png') });

    assert.deepEqual(await axeViolations(page), [], 'axe-core finds no accessibility violations on the replayed thread');
    const body = await page.content();
    assert.ok(!body.includes(token), 'the token is not left in the page');
    assert.deepEqual(pageErrors, []);
  } finally {
    await context?.close();
    await host.stop();
  }
});

test('at 390 px from a #token= link: conversation first, a failure’s issues shown plainly, no 404, sign-out', { skip: CHROMIUM_SKIP_REASON, timeout: 90_000 }, async () => {
  const token = await mintBearer('bob', { name: 'Bob' });
  const host = await startHost({ transport: 'ws' });
  let context: BrowserContext | undefined;
  try {
    context = await (await sharedBrowser()).newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, bypassCSP: true });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    const failed: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
    });

    await page.goto(`http://127.0.0.1:${host.port}/#token=${token}`);
    await page.getByTestId('session-user').filter({ hasText: 'bob' }).waitFor();
    assert.ok(!page.url().includes(token), 'the fragment left the address bar');
    assert.match(await page.getByTestId('header-user').innerText(), /Signed in as\s+bob/);

    // A call the model could get wrong: the card names the field and what is wrong with it.
    await page.getByTestId('call-module').fill('calendar');
    await page.getByTestId('call-method').fill('read');
    await page.getByTestId('call-thread').fill('mobile-thread');
    await page.getByTestId('call-input').fill(JSON.stringify({ mode: 'day', date: 'tomorrow' }));
    await page.getByTestId('call-submit').click();
    const card = page.locator('[data-testid="tool-card"][data-status="failure"]');
    await card.first().waitFor();
    assert.equal(await card.getByTestId('tool-error-code').innerText(), 'INVALID_ACTION_INPUT');
    const raw = JSON.parse((await card.getByTestId('tool-card-raw').textContent()) ?? '') as { error: { issues: Array<{ path: string; message: string }> } };
    const issue = raw.error.issues.find((i) => i.path === 'date');
    assert.ok(issue, JSON.stringify(raw.error.issues));
    const shown = await card.getByTestId('tool-error-issue').allInnerTexts();
    assert.ok(shown.some((t) => t.startsWith(`date: ${issue.message}`)), `the issue is on the card: ${JSON.stringify(shown)}`);
    assert.ok(await card.getByTestId('tool-error-issue').first().isVisible(), 'visible without opening the raw content');

    // One column, and the conversation comes first.
    const top = (id: string) => page.locator(`#${id}`).evaluate((e: any) => e.getBoundingClientRect().top + document.documentElement.scrollTop);
    await page.evaluate(() => document.documentElement.scrollTo(0, 0));
    const [conversation, threads, call, session, list] = await Promise.all(['conversation', 'threads-panel', 'call-panel', 'session-panel', 'message-list'].map(top));
    assert.ok(conversation! < threads! && threads! < call! && call! < session!, JSON.stringify({ conversation, threads, call, session }));
    assert.ok(list! < 844 / 2, `the messages start in the top half of the first screen (${list})`);
    await page.screenshot({ path: screenshotPath('inspector-mobile.png') });

    assert.deepEqual(await axeViolations(page), [], 'axe-core finds no accessibility violations at 390 px');

    // Sign out: the token is forgotten and the connection (with the daemon's session) is closed, then reopened.
    const closedBefore = host.stderr().split('"msg":"connection closed"').length;
    await page.getByTestId('header-sign-out').click();
    await page.getByTestId('token-input').waitFor();
    assert.equal(await page.getByTestId('session-info').isHidden(), true);
    assert.equal(await page.getByTestId('header-user').isHidden(), true);
    assert.equal(await page.getByTestId('thread-list').locator('li').count(), 0);
    await page.getByTestId('connection-status').filter({ hasText: 'Connected' }).waitFor();
    await waitFor(() => host.stderr().split('"msg":"connection closed"').length > closedBefore, 'the daemon to see the connection close', 5000, 50);
    await page.getByTestId('call-submit').click();
    await page.getByTestId('call-status').filter({ hasText: 'Open a session first.' }).waitFor();

    // The icon the page links and the one browsers ask for by default.
    for (const path of ['/favicon.svg', '/favicon.ico']) {
      const res = await fetch(`http://127.0.0.1:${host.port}${path}`);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('content-type'), 'image/svg+xml');
      await res.arrayBuffer();
    }
    assert.deepEqual(failed, [], 'no request of the page failed');
    assert.deepEqual(pageErrors, []);
  } finally {
    await context?.close();
    await host.stop();
  }
  assert.ok(!host.stderr().includes(token), 'the token is in no log line');
});

test('a call made from the form brings its card into view; placeholders read as hints, not values', { skip: CHROMIUM_SKIP_REASON, timeout: 90_000 }, async () => {
  const host = await startInProcess({ transport: 'ws' });
  let context: BrowserContext | undefined;
  try {
    const token = await mintBearer('carol', { name: 'Carol' });
    const s = await openSession(host, token);
    // A thread longer than the message list's height.
    for (let i = 0; i < 8; i++) {
      await host.request('tool/invoke', {
        session_id: s.session_id, thread_id: 'long', tool_call_id: `c${i}`,
        args: { module: 'calendar', method: 'create', input: { title: `Meeting ${i}`, start_at: '2026-05-01T10:00:00Z', end_at: '2026-05-01T11:00:00Z', description: 'x'.repeat(200) } },
      });
    }
    context = await (await sharedBrowser()).newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${host.port}/`);

    // Placeholders are hints: each says so in words and is drawn unlike typed text.
    const placeholders = await page.locator('input[placeholder], textarea[placeholder]').evaluateAll((els) =>
      els.map((e: any) => ({ id: e.id, text: e.placeholder, style: (globalThis as any).getComputedStyle(e, '::placeholder').fontStyle })),
    );
    assert.ok(placeholders.length >= 4, JSON.stringify(placeholders));
    for (const p of placeholders) {
      assert.match(p.text, /^(e\.g\. |blank|paste )/i, `#${p.id}: "${p.text}" reads as a hint`);
      assert.equal(p.style, 'italic', `#${p.id} placeholder is drawn unlike a value`);
    }

    await page.getByTestId('token-input').fill(token);
    await page.getByTestId('open-session').click();
    await page.locator('[data-testid="thread-item"][data-thread-id="long"]').click();
    const list = page.getByTestId('message-list');
    await list.locator('[data-testid="tool-card"][data-tool-call-id="c7"]').waitFor();
    // The reader scrolls up to the oldest message, then makes a call.
    await list.evaluate((e: any) => (e.scrollTop = 0));
    await page.getByTestId('call-module').fill('calendar');
    await page.getByTestId('call-method').fill('create');
    await page.getByTestId('call-tool-call-id').fill('from-form');
    await page.getByTestId('call-input').fill(JSON.stringify({ title: 'Made here', start_at: '2026-05-02T10:00:00Z', end_at: '2026-05-02T11:00:00Z' }));
    await page.getByTestId('call-submit').click();
    const card = list.locator('[data-testid="tool-card"][data-tool-call-id="from-form"][data-status="success"]');
    await card.waitFor();
    await page.getByTestId('call-status').filter({ hasText: 'Response: success' }).waitFor();
    const [box, view] = await Promise.all([card.evaluate((e: any) => e.getBoundingClientRect().toJSON()), list.evaluate((e: any) => e.getBoundingClientRect().toJSON())]);
    assert.ok(box.top >= view.top - 1 && box.bottom <= view.bottom + 1, `the new card is in view: card ${JSON.stringify(box)}, list ${JSON.stringify(view)}`);
  } finally {
    await context?.close();
    await host.stop();
  }
});

test('npm run inspector prints a ready #token= link; the daemon accepts the token and never logs it', { timeout: 60_000 }, async () => {
  const dir = tempDir();
  const env: NodeJS.ProcessEnv = { ...process.env, TOOLGATE_HOME: dir };
  delete env['NODE_EXTRA_CA_CERTS'];
  delete env['TOOLGATE_BEARER_SECRET'];
  delete env['TOOLGATE_BEARER_JWKS'];
  const child = spawn(process.execPath, [join(REPO_ROOT, 'scripts', 'inspector.mjs'), '--port', '0', '--db', join(dir, 'toolgate.db')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  try {
    const link = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no link printed; stderr: ${stderr}`)), 30_000);
      createInterface({ input: child.stdout }).on('line', (line) => {
        const m = /^http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]+\.[\w-]+\.[\w-]+$/.exec(line.trim());
        if (m) {
          clearTimeout(timer);
          resolve(m[0]);
        }
      });
    });
    const url = new URL(link);
    const token = url.hash.slice('#token='.length);
    const page = await fetch(`${url.origin}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /toolgate inspector/);
    // A thread that does not exist answers 404 to a valid token (401 to a bad one).
    const stream = await fetch(`${url.origin}/threads/none/events`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(stream.status, 404);
    await stream.text();
    assert.ok(!stderr.includes(token), 'the daemon’s log lines never hold the token');
  } finally {
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  }
});
