/**
 * The calls awaiting the user's approval (contract section 17): one entry per
 * `tool/approval` this page hears — its own calls and those of every thread it
 * watches — with the exact arguments, their digest and the confirmation card,
 * and Approve / Deny (with a reason). A decision is `call/approve` or
 * `call/deny` bound to the `args_sha256` the notification carried, so what is
 * approved is exactly what was shown; the answer (`{state, outcome?}`) is
 * shown on the entry. A call decided elsewhere, expired or cancelled ends its
 * entry when its final `tool/result` arrives.
 *
 * On sign-in, and every few seconds while the page is visible, the list is
 * read whole with `call/list`: calls asked before the page opened, or in a
 * thread the page does not watch (yet), are shown too; an entry the listing
 * no longer holds was decided where the page could not hear it.
 */
import { byId, el, isObject, parseJsonObject, str, timeElement, type Announcer } from './dom.js';
import { describeError, type RpcClient } from './rpc-client.js';
import { renderUiSchema } from './ui-renderer.js';
import type { CallApprovalBody, CallCancelResult, CallListResult, SessionOpenResult, ToolApprovalNotification, ToolResultNotification } from './wire.js';

/** How often the pending calls are listed again while the page is visible (as the threads are). */
export const APPROVAL_POLL_MS = 3000;
/** The pages one listing reads at most (100 calls each). */
const MAX_PAGES = 10;

type Decision = CallApprovalBody['decision'];

interface Entry {
  readonly n: ToolApprovalNotification;
  readonly li: HTMLLIElement;
  readonly buttons: HTMLButtonElement[];
  readonly reason: HTMLInputElement;
  readonly outcome: HTMLElement;
  decided: boolean;
}

export class ApprovalList {
  private readonly entries = new Map<string, Entry>();
  private readonly panel = byId('approvals-panel');
  private readonly list = byId('approval-list');
  private readonly count = byId('approvals-count');
  private pollTimer: ReturnType<typeof setInterval> | undefined;
  private loading = false;

  constructor(
    private readonly rpc: () => RpcClient | null,
    private readonly session: () => SessionOpenResult | null,
    private readonly announcer: Announcer,
  ) {}

  /** A `tool/approval`: a call waits for a person (a repeat of one shown already changes nothing). */
  onApproval(n: ToolApprovalNotification): void {
    if (this.add(n)) this.announcer.say(`${n.action} in thread ${n.thread_id} awaits your approval.`);
  }

  /** Shows a call awaiting approval unless it is shown already; true when it is new here. */
  private add(n: ToolApprovalNotification): boolean {
    if (!isApproval(n)) return false;
    const key = keyOf(n.thread_id, n.tool_call_id);
    const known = this.entries.get(key);
    if (known && !known.decided && known.n.args_sha256 === n.args_sha256) return false;
    known?.li.remove();
    const entry = this.render(n);
    this.entries.set(key, entry);
    this.list.prepend(entry.li);
    this.update();
    return true;
  }

  /** Enabled while a session is open: the list is read now and again every few seconds. */
  setEnabled(enabled: boolean): void {
    clearInterval(this.pollTimer);
    this.pollTimer = enabled
      ? setInterval(() => {
          if (document.visibilityState === 'visible') void this.load();
        }, APPROVAL_POLL_MS)
      : undefined;
    if (enabled) void this.load();
  }

  /**
   * Reads the user's calls awaiting approval (`call/list`, every page): new ones are shown, oldest at the
   * bottom; an entry shown before this read began that the listing no longer holds was decided elsewhere.
   */
  async load(): Promise<void> {
    const rpc = this.rpc();
    const session = this.session();
    if (!rpc || !session || this.loading) return;
    this.loading = true;
    const before = new Set([...this.entries].filter(([, e]) => !e.decided).map(([k]) => k));
    try {
      const listed: ToolApprovalNotification[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < MAX_PAGES; page++) {
        const params: { session_id: string; limit: number; cursor?: string } = { session_id: session.session_id, limit: 100, ...(cursor ? { cursor } : {}) };
        const result: CallListResult = await rpc.request<CallListResult>('call/list', params, { timeoutMs: 20_000 });
        listed.push(...(Array.isArray(result?.calls) ? result.calls : []));
        cursor = typeof result?.next_cursor === 'string' ? result.next_cursor : null;
        if (!cursor) break;
      }
      if (this.session() !== session) return; // signed out or another session meanwhile
      // Most recent first on the wire; each is prepended, so the oldest goes in first.
      const added = listed.reverse().filter((n) => this.add(n)).length;
      if (added > 0) this.announcer.say(`${added} call${added === 1 ? '' : 's'} await${added === 1 ? 's' : ''} your approval.`);
      if (cursor) return; // not read whole: what is missing may be on a later page
      const still = new Set(listed.map((n) => keyOf(n.thread_id, n.tool_call_id)));
      for (const key of before) {
        const entry = this.entries.get(key);
        if (entry && !entry.decided && !still.has(key)) this.settle(entry, 'elsewhere', 'No longer awaits approval: decided elsewhere, expired or cancelled', 'gone');
      }
    } catch (err) {
      this.count.textContent = `Could not list the calls awaiting approval: ${describeError(err)}`;
    } finally {
      this.loading = false;
    }
  }

  /** A final `tool/result` ends a pending entry: decided elsewhere, expired or cancelled. */
  onToolResult(n: ToolResultNotification): void {
    if (!n.final) return;
    const entry = this.entries.get(keyOf(n.thread_id, n.tool_call_id));
    if (!entry || entry.decided) return;
    const code = n.status === 'failure' ? str(n.error?.code) : '';
    this.settle(entry, 'elsewhere', `Decided: ${str(n.status)}${code ? ` — ${code}` : ''}`, str(n.status));
  }

  /** A new session, sign-out: nothing of the last session stays on the page. */
  clear(): void {
    this.setEnabled(false);
    this.entries.clear();
    this.list.replaceChildren();
    this.update();
  }

  private render(n: ToolApprovalNotification): Entry {
    const li = el('li', 'approval');
    li.dataset['testid'] = 'approval';
    li.dataset['threadId'] = n.thread_id;
    li.dataset['toolCallId'] = n.tool_call_id;
    li.dataset['state'] = 'awaiting_approval';
    const article = el('article', 'approval-card');
    const headingId = `approval-${Math.random().toString(36).slice(2, 10)}`;
    article.setAttribute('aria-labelledby', headingId);

    const head = el('header', 'approval-head');
    const title = el('h3', 'approval-title', n.action);
    title.id = headingId;
    title.dataset['testid'] = 'approval-action';
    const expires = el('p', 'approval-expiry');
    expires.append(document.createTextNode('Expires '), timeElement(n.expires_at));
    head.append(title, expires);

    const where = el('dl', 'approval-ids');
    where.append(pair('Thread', n.thread_id), pair('Tool call', n.tool_call_id), pair('Args SHA-256', n.args_sha256, 'approval-digest'));

    const argsHead = el('p', 'approval-label', 'Exact arguments (what approving runs)');
    const args = el('pre', 'raw approval-args', JSON.stringify(n.tool_call_args, null, 2));
    args.dataset['testid'] = 'approval-args';
    args.tabIndex = 0;

    const card = el('div', 'approval-ui');
    card.dataset['testid'] = 'approval-ui';
    card.append(n.ui_schema ? renderUiSchema(n.ui_schema, { headingLevel: 4 }) : el('p', 'muted', 'The daemon sent no confirmation card for this action.'));

    const form = el('form', 'approval-form');
    form.autocomplete = 'off';
    const reasonId = `${headingId}-reason`;
    const reasonLabel = el('label', '', 'Reason if you deny ');
    reasonLabel.htmlFor = reasonId;
    reasonLabel.append(el('span', 'optional', '(optional, the agent is told)'));
    const reason = el('input');
    reason.type = 'text';
    reason.id = reasonId;
    reason.maxLength = 2000;
    reason.dataset['testid'] = 'approval-reason';
    const row = el('div', 'approval-buttons');
    const approve = button('Approve', 'btn btn-approve', 'approval-approve');
    const deny = button('Deny', 'btn btn-deny', 'approval-deny');
    row.append(approve, deny);
    form.append(reasonLabel, reason, row);
    const outcome = el('p', 'approval-outcome');
    outcome.dataset['testid'] = 'approval-outcome';
    outcome.setAttribute('role', 'status');

    article.append(head, where, argsHead, args, card, form, outcome);
    li.append(article);
    const entry: Entry = { n, li, buttons: [approve, deny], reason, outcome, decided: false };
    approve.addEventListener('click', () => void this.decide(entry, 'approve'));
    deny.addEventListener('click', () => void this.decide(entry, 'deny'));
    form.addEventListener('submit', (ev) => ev.preventDefault()); // Enter in the reason box decides nothing
    return entry;
  }

  private async decide(entry: Entry, decision: Decision): Promise<void> {
    const rpc = this.rpc();
    const session = this.session();
    if (!rpc || !session || entry.decided) return;
    const { thread_id, tool_call_id, args_sha256 } = entry.n;
    const reason = entry.reason.value.trim();
    const params = {
      session_id: session.session_id,
      thread_id,
      tool_call_id,
      args_sha256,
      ...(decision === 'deny' && reason ? { reason } : {}),
    };
    for (const b of entry.buttons) b.disabled = true;
    entry.outcome.textContent = decision === 'approve' ? 'Approving…' : 'Denying…';
    try {
      const result = await rpc.request<CallCancelResult>(decision === 'approve' ? 'call/approve' : 'call/deny', params, { timeoutMs: 120_000 });
      const status = str(result?.outcome?.status);
      const code = str(errorOf(result?.outcome)?.['code']);
      const verb = decision === 'approve' ? 'Approved' : 'Denied';
      const said = result?.state === 'done' ? `${verb}: ${status}${code ? ` — ${code}` : ''}` : `${verb}: the call is ${str(result?.state)}`;
      this.settle(entry, decision, said, status || str(result?.state));
    } catch (err) {
      if (entry.decided) return;
      for (const b of entry.buttons) b.disabled = false;
      entry.outcome.textContent = `Could not ${decision}: ${describeError(err)}`;
      entry.li.dataset['state'] = 'error';
    }
  }

  /** The entry's call is decided: no more buttons, what happened in their place. */
  private settle(entry: Entry, by: Decision | 'elsewhere', text: string, outcome: string): void {
    entry.decided = true;
    entry.li.dataset['state'] = 'decided';
    entry.li.dataset['decision'] = by;
    entry.li.dataset['outcome'] = outcome;
    for (const b of entry.buttons) b.disabled = true;
    entry.buttons[0]?.closest('form')?.setAttribute('hidden', '');
    entry.outcome.textContent = text;
    this.announcer.say(`${entry.n.action} (${entry.n.tool_call_id}): ${text}`);
    this.update();
  }

  private update(): void {
    const pending = [...this.entries.values()].filter((e) => !e.decided).length;
    this.panel.hidden = this.entries.size === 0;
    this.count.textContent = pending === 0 ? 'Nothing awaits your approval.' : `${pending} call${pending === 1 ? '' : 's'} await${pending === 1 ? 's' : ''} your approval.`;
  }
}

function keyOf(threadId: string, toolCallId: string): string {
  return JSON.stringify([threadId, toolCallId]);
}

function isApproval(n: unknown): n is ToolApprovalNotification {
  return (
    isObject(n) &&
    typeof n['thread_id'] === 'string' &&
    typeof n['tool_call_id'] === 'string' &&
    typeof n['action'] === 'string' &&
    typeof n['args_sha256'] === 'string' &&
    typeof n['expires_at'] === 'string' &&
    isObject(n['tool_call_args'])
  );
}

/** The failure of an outcome, as its projection text says. */
function errorOf(outcome: CallCancelResult['outcome']): Record<string, unknown> | undefined {
  const text = outcome?.content?.map((c) => str(c?.text)).join('');
  const error = parseJsonObject(text)?.['error'];
  return isObject(error) ? error : undefined;
}

function pair(name: string, value: string, testid?: string): HTMLDivElement {
  const div = el('div');
  const dd = el('dd');
  const code = el('code', '', value);
  if (testid) code.dataset['testid'] = testid;
  dd.append(code);
  div.append(el('dt', '', name), dd);
  return div;
}

function button(text: string, className: string, testid: string): HTMLButtonElement {
  const b = el('button', className, text);
  b.type = 'button';
  b.dataset['testid'] = testid;
  return b;
}
