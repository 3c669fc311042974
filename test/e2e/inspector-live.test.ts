/**
 * The inspector against a real daemon: a person opens it from `serve --ws`,
 * opens a session with a token, creates an event through the form, sees its
 * card rendered from ui_schema, reloads and sees it replayed from history.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startHost } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import { join } from 'node:path';
import { REPO_ROOT, screenshotPath } from '../helpers/repo.js';
import { CHROMIUM_SKIP_REASON, launchBrowser } from '../helpers/browser.js';

test('create an event through the inspector, see its card, reload and see it replayed', { skip: CHROMIUM_SKIP_REASON, timeout: 90_000 }, async () => {
  const host = await startHost({ transport: 'ws' });
  let browser: Browser | undefined;
  try {
    const token = await mintBearer('alice', { name: 'Alice' });
    browser = await launchBrowser();
    // bypassCSP only so the test can inject axe-core; the page itself runs under its CSP otherwise.
    const page = await (await browser.newContext({ viewport: { width: 1360, height: 900 }, bypassCSP: true })).newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));

    await page.goto(`http://127.0.0.1:${host.port}/`);
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

    // Reload: the token is gone from memory, so open the session again, then replay the thread.
    await page.reload();
    await page.getByTestId('token-input').fill(token);
    await page.getByTestId('open-session').click();
    await page.locator('[data-testid="thread-item"][data-thread-id="inspector-thread"]').click();
    const replayed = page.locator('[data-testid="message-list"] [data-testid="tool-card"]');
    await replayed.first().getByTestId('ui-card').filter({ hasText: 'Design review' }).first().waitFor();
    await page.screenshot({ path: screenshotPath('inspector-replay.png') });

    await page.addScriptTag({ path: join(REPO_ROOT, 'node_modules', 'axe-core', 'axe.min.js') });
    const violations = await page.evaluate(async () => {
      const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }).axe;
      return (await axe.run()).violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
    });
    assert.deepEqual(violations, [], 'axe-core finds no accessibility violations on the replayed thread');

    const body = await page.content();
    assert.ok(!body.includes(token), 'the token is not left in the page');
    assert.deepEqual(pageErrors, []);
  } finally {
    await browser?.close();
    await host.stop();
  }
});
