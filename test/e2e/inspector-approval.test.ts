/**
 * The inspector's approval list against a real daemon, in Chromium (contract
 * section 17): an agent host on another connection calls `ask` actions in a
 * thread the page watches; each call appears in the page with its exact
 * arguments, their digest and the confirmation card; a click on Approve runs
 * it (once), and Deny with a reason ends it `APPROVAL_DENIED` carrying that
 * reason. The host's pending `tool/invoke` answers with what the page decided.
 * A thread another connection makes appears in the page without Refresh. A
 * call asked before the page opened is listed on sign-in (`call/list`).
 *
 * The daemon runs in this process (test/helpers/in-process.ts) on its real
 * WebSocket listener, calls on the in-process executor: what is checked is
 * the page against the daemon's wire. One Chromium serves the file, a fresh
 * context per test.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { openSession } from '../helpers/host.js';
import { startInProcess } from '../helpers/in-process.js';
import { mintBearer } from '../helpers/tokens.js';
import { REPO_ROOT, screenshotPath, tempDir } from '../helpers/repo.js';
import { CHROMIUM_SKIP_REASON, launchBrowser } from '../helpers/browser.js';
import { argsSha256 } from '../../src/codec/canonical-json.js';
import { waitFor } from '../helpers/wait-for.js';
import type { CallGetResult, ToolResponse } from '../../src/protocol/index.js';

/** A default profile that asks before deleting an event or forgetting a memory. */
function askConfig(): string {
  const file = join(tempDir(), 'toolgate.config.json');
  const profile = { enabled_skills: ['calendar', 'memory'], allowed_actions: ['calendar.*', 'memory.*'], approval: { ask: ['calendar.delete', 'memory.forget'], ttl_s: 600 } };
  writeFileSync(file, JSON.stringify({ agents: { default: profile } }));
  return file;
}

async function axeViolations(page: Page): Promise<Array<{ id: string; impact: string; nodes: number }>> {
  await page.addScriptTag({ path: join(REPO_ROOT, 'node_modules', 'axe-core', 'axe.min.js') });
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }).axe;
    return (await axe.run()).violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
  });
}

let shared: Promise<Browser> | undefined;
/** The file's one Chromium, launched by the first test that needs it. */
const sharedBrowser = (): Promise<Browser> => (shared ??= launchBrowser());
after(async () => {
  await (await shared)?.close();
});

const errorOf = (r: ToolResponse) => (JSON.parse(r.content[0]!.text) as { error?: { code?: string; reason?: string } }).error;

test('calls awaiting approval appear in the inspector with their args and card; Approve runs one, Deny ends the other with the reason', { skip: CHROMIUM_SKIP_REASON, timeout: 120_000 }, async () => {
  const host = await startInProcess({ transport: 'ws', args: ['--config', askConfig()] });
  let context: BrowserContext | undefined;
  try {
    const token = await mintBearer('alice', { name: 'Alice' });
    const agent = await openSession(host, token);
    const call = <T>(threadId: string, toolCallId: string, module: string, method: string, input: Record<string, unknown>) =>
      host.request<T>('tool/invoke', { session_id: agent.session_id, thread_id: threadId, tool_call_id: toolCallId, args: { module, method, input } });
    const create = async (id: string, title: string) => {
      const r = await call<ToolResponse>('planning', id, 'calendar', 'create', { title, start_at: '2026-10-10T08:00:00Z', end_at: '2026-10-10T09:00:00Z' });
      assert.equal(r.status, 'success', r.content[0]!.text);
      return (JSON.parse(r.content[0]!.text) as { data: { event: { id: string } } }).data.event.id;
    };
    const keep = await create('create-keep', 'Board meeting');
    const drop = await create('create-drop', 'Old standup');

    // bypassCSP only so the test can inject axe-core; the page itself runs under its CSP otherwise.
    context = await (await sharedBrowser()).newContext({ viewport: { width: 1280, height: 1000 }, bypassCSP: true });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(`http://127.0.0.1:${host.port}/#token=${token}`);
    await page.getByTestId('session-user').filter({ hasText: 'alice' }).waitFor();
    // The page watches the thread (it is listed and subscribed) before the agent asks in it.
    await page.locator('[data-testid="thread-item"][data-thread-id="planning"][data-live="true"]').waitFor();
    assert.equal(await page.getByTestId('approvals-panel').isHidden(), true, 'no panel while nothing awaits approval');

    // --- the agent asks to delete an event: the call is in the page, exactly as it would run.
    const delArgs = { module: 'calendar', method: 'delete', input: { event_id: drop } };
    const deleting = call<ToolResponse>('planning', 'del-1', 'calendar', 'delete', delArgs.input);
    const asked = page.locator('[data-testid="approval"][data-tool-call-id="del-1"]');
    await asked.waitFor();
    assert.equal(await asked.getByTestId('approval-action').innerText(), 'calendar.delete');
    assert.deepEqual(JSON.parse(await asked.getByTestId('approval-args').innerText()), delArgs, 'the exact arguments');
    assert.equal(await asked.getByTestId('approval-digest').innerText(), argsSha256(delArgs), 'the digest the decision is bound to');
    const card = asked.getByTestId('approval-ui');
    await card.getByText('Will be deleted').waitFor();
    await card.getByText('Old standup').first().waitFor();
    assert.match(await page.getByTestId('approvals-count').innerText(), /^1 call awaits your approval/);

    // --- and to forget a memory, in the same thread.
    const saved = await call<ToolResponse>('planning', 'mem-1', 'memory', 'update', { key: 'desk', content: 'third floor, by the window' });
    assert.equal(saved.status, 'success', saved.content[0]!.text);
    const forgetArgs = { module: 'memory', method: 'forget', input: { key: 'desk' } };
    const forgetting = call<ToolResponse>('planning', 'forget-1', 'memory', 'forget', forgetArgs.input);
    const asked2 = page.locator('[data-testid="approval"][data-tool-call-id="forget-1"]');
    await asked2.getByTestId('approval-ui').getByText('Will be forgotten').waitFor();
    assert.match(await page.getByTestId('approvals-count').innerText(), /^2 calls await your approval/);
    await page.screenshot({ path: screenshotPath('inspector-approval.png') });
    assert.deepEqual(await axeViolations(page), [], 'axe-core finds no accessibility violations with calls awaiting approval');

    // Nothing ran yet.
    const state = (id: string) => host.request<CallGetResult>('call/get', { session_id: agent.session_id, thread_id: 'planning', tool_call_id: id });
    assert.equal((await state('del-1')).state, 'awaiting_approval');
    assert.equal((await state('forget-1')).state, 'awaiting_approval');

    // --- Approve: the call runs once, and the agent's pending call answers with its outcome.
    await asked.getByTestId('approval-approve').click();
    await page.locator('[data-testid="approval"][data-tool-call-id="del-1"][data-state="decided"][data-decision="approve"]').waitFor();
    assert.equal(await asked.getByTestId('approval-outcome').innerText(), 'Approved: success');
    const deleted = await deleting;
    assert.equal(deleted.status, 'success', deleted.content[0]!.text);
    assert.deepEqual((await state('del-1')).outcome, deleted);

    // --- Deny with a reason: the agent learns APPROVAL_DENIED and why.
    await asked2.getByTestId('approval-reason').fill('keep it, I still sit there');
    await asked2.getByTestId('approval-deny').click();
    await page.locator('[data-testid="approval"][data-tool-call-id="forget-1"][data-state="decided"][data-decision="deny"]').waitFor();
    assert.equal(await asked2.getByTestId('approval-outcome').innerText(), 'Denied: failure — APPROVAL_DENIED');
    const denied = await forgetting;
    assert.equal(denied.status, 'failure');
    assert.deepEqual({ code: errorOf(denied)?.code, reason: errorOf(denied)?.reason }, { code: 'APPROVAL_DENIED', reason: 'keep it, I still sit there' });
    assert.equal(await page.getByTestId('approvals-count').innerText(), 'Nothing awaits your approval.');

    // What the decisions did: the one event is gone, the other stays; the memory stays.
    const events = await call<ToolResponse>('planning', 'read-1', 'calendar', 'read', { mode: 'event', event_id: keep });
    assert.equal(events.status, 'success', events.content[0]!.text);
    const gone = await call<ToolResponse>('planning', 'read-2', 'calendar', 'read', { mode: 'event', event_id: drop });
    assert.equal(gone.status, 'failure', gone.content[0]!.text);
    const memory = await call<ToolResponse>('planning', 'read-3', 'memory', 'read', { key: 'desk' });
    assert.match(memory.content[0]!.text, /third floor/);

    // --- A thread another connection makes appears in the page without Refresh.
    await call<ToolResponse>('made-elsewhere', 'else-1', 'memory', 'update', { key: 'lunch', content: 'noon' });
    await page.locator('[data-testid="thread-item"][data-thread-id="made-elsewhere"][data-live="true"]').waitFor({ timeout: 15_000 });
    // ... and, watched, a call awaiting approval in it reaches the page too.
    const lateArgs = { module: 'memory', method: 'forget', input: { key: 'lunch' } };
    const late = call<ToolResponse>('made-elsewhere', 'forget-2', 'memory', 'forget', lateArgs.input);
    const asked3 = page.locator('[data-testid="approval"][data-tool-call-id="forget-2"]');
    await asked3.waitFor();
    // Decided elsewhere (the agent's own connection): the entry ends with what happened.
    await host.request('call/deny', { session_id: agent.session_id, thread_id: 'made-elsewhere', tool_call_id: 'forget-2', args_sha256: argsSha256(lateArgs) });
    assert.equal((await late).status, 'failure');
    await page.locator('[data-testid="approval"][data-tool-call-id="forget-2"][data-state="decided"][data-decision="elsewhere"]').waitFor();
    assert.equal(await asked3.getByTestId('approval-approve').count(), 1);
    assert.equal(await asked3.getByTestId('approval-approve').isVisible(), false, 'no buttons on a decided call');
    assert.deepEqual(pageErrors, []);
  } finally {
    await context?.close();
    await host.stop();
  }
});

test('a call asked before the page opened is listed on sign-in (call/list) and can be approved there', { skip: CHROMIUM_SKIP_REASON, timeout: 120_000 }, async () => {
  const host = await startInProcess({ transport: 'ws', args: ['--config', askConfig()] });
  let context: BrowserContext | undefined;
  try {
    const token = await mintBearer('alice', { name: 'Alice' });
    const agent = await openSession(host, token);
    const call = (toolCallId: string, method: string, input: Record<string, unknown>) =>
      host.request<ToolResponse>('tool/invoke', { session_id: agent.session_id, thread_id: 'earlier', tool_call_id: toolCallId, args: { module: 'memory', method, input } });
    assert.equal((await call('mem-1', 'update', { key: 'desk', content: 'by the window' })).status, 'success');
    // Asked while no page is open: no tool/approval will ever reach the page.
    const forgetArgs = { module: 'memory', method: 'forget', input: { key: 'desk' } };
    const forgetting = call('forget-early', 'forget', forgetArgs.input);
    forgetting.catch(() => {}); // rejected when a failed assertion stops the host: the assertion is the failure to see
    await waitFor(() => host.wire.find((e) => e.method === 'tool/approval' && (e.payload as { tool_call_id?: string }).tool_call_id === 'forget-early'), 'the call stored awaiting approval');

    context = await (await sharedBrowser()).newContext({ viewport: { width: 1280, height: 1000 } });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(`http://127.0.0.1:${host.port}/#token=${token}`);
    await page.getByTestId('session-user').filter({ hasText: 'alice' }).waitFor();
    const asked = page.locator('[data-testid="approval"][data-tool-call-id="forget-early"]');
    await asked.waitFor({ timeout: 10_000 });
    assert.deepEqual(JSON.parse(await asked.getByTestId('approval-args').innerText()), forgetArgs, 'the exact arguments');
    assert.equal(await asked.getByTestId('approval-digest').innerText(), argsSha256(forgetArgs));
    await asked.getByTestId('approval-ui').getByText('Will be forgotten').waitFor();
    assert.match(await page.getByTestId('approvals-count').innerText(), /^1 call awaits your approval/);

    await asked.getByTestId('approval-approve').click();
    await page.locator('[data-testid="approval"][data-tool-call-id="forget-early"][data-state="decided"][data-decision="approve"]').waitFor();
    const forgotten = await forgetting;
    assert.equal(forgotten.status, 'success', forgotten.content[0]!.text);
    assert.equal(await asked.getByTestId('approval-outcome').innerText(), 'Approved: success');
    assert.deepEqual(pageErrors, []);
  } finally {
    await context?.close();
    await host.stop();
  }
});
