/**
 * The threads panel: the session user's threads (`thread/list`, most recent
 * first), the selected one marked, and a form that starts a new thread id.
 * Choosing a thread hands it to the conversation.
 *
 * The list keeps itself current: it is read again every few seconds while a
 * session is open and the page is visible (a thread another connection made
 * appears without Refresh), and the listed threads are watched, so a call
 * in any of them that waits for approval reaches the page.
 */
import { byId, el, timeElement, type Announcer } from './dom.js';
import { describeError, type RpcClient } from './rpc-client.js';
import type { ThreadWatches } from './watches.js';
import type { SessionOpenResult, ThreadSummary } from './wire.js';

/** How often the list is read again while the page is visible. */
export const THREAD_POLL_MS = 3000;

export interface Selection {
  threadId: string | null;
  /** Chosen by id, not (yet) in the list: no messages so far. */
  isNew: boolean;
}

export class ThreadList {
  threads: ThreadSummary[] = [];
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  private pollTimer: ReturnType<typeof setInterval> | undefined;
  private readonly list = byId('thread-list');
  private readonly status = byId('threads-status');
  private readonly refreshButton = byId<HTMLButtonElement>('refresh-threads');
  private readonly newForm = byId<HTMLFormElement>('new-thread-form');
  private readonly newInput = byId<HTMLInputElement>('new-thread-input');
  private readonly newSubmit = byId<HTMLButtonElement>('new-thread-submit');

  constructor(
    private readonly rpc: () => RpcClient | null,
    private readonly session: () => SessionOpenResult | null,
    private readonly selection: () => Selection,
    private readonly choose: (threadId: string, isNew: boolean) => void,
    private readonly watches: ThreadWatches,
    private readonly announcer: Announcer,
  ) {
    this.refreshButton.addEventListener('click', () => void this.refresh());
    this.newForm.addEventListener('submit', (ev) => {
      ev.preventDefault();
      if (!this.session()) return;
      const id = this.newInput.value.trim() || `insp-thread-${Date.now()}`;
      this.newInput.value = '';
      this.choose(id, !this.has(id));
    });
  }

  has(threadId: string): boolean {
    return this.threads.some((t) => t.thread_id === threadId);
  }

  /** Enabled while a session is open: the buttons work and the list keeps itself current. */
  setEnabled(enabled: boolean): void {
    this.refreshButton.disabled = !enabled;
    this.newSubmit.disabled = !enabled;
    clearInterval(this.pollTimer);
    this.pollTimer = enabled
      ? setInterval(() => {
          if (document.visibilityState === 'visible') void this.refresh({ quiet: true });
        }, THREAD_POLL_MS)
      : undefined;
  }

  /** Reads the list again; `quiet` (the periodic read) says nothing unless it fails. */
  async refresh(opts: { quiet?: boolean } = {}): Promise<void> {
    const rpc = this.rpc();
    const session = this.session();
    if (!rpc || !session) return;
    if (!opts.quiet) this.status.textContent = 'Loading threads…';
    try {
      const result = await rpc.request<{ threads?: unknown }>('thread/list', { session_id: session.session_id }, { timeoutMs: 20_000 });
      this.threads = Array.isArray(result?.threads)
        ? (result.threads as unknown[]).filter((t): t is ThreadSummary => !!t && typeof (t as ThreadSummary).thread_id === 'string')
        : [];
      this.render();
      await this.watches.watchAll(this.threads.map((t) => t.thread_id));
      this.render(); // now marked live
    } catch (err) {
      this.status.textContent = `Could not list threads: ${describeError(err)}`;
      if (!opts.quiet) this.announcer.say(this.status.textContent); // a failing poll is not said every few seconds
    }
  }

  /** Soon, once: several calls finishing together refresh the list once. */
  refreshSoon(): void {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => void this.refresh(), 250);
  }

  clear(): void {
    this.threads = [];
    this.list.replaceChildren();
    this.status.textContent = 'Open a session to see threads.';
  }

  render(): void {
    const { threadId, isNew } = this.selection();
    const items: HTMLLIElement[] = [];
    if (threadId && isNew && !this.has(threadId)) items.push(this.item({ thread_id: threadId }, true, threadId));
    for (const t of this.threads) items.push(this.item(t, false, threadId));
    // The list is rebuilt whenever calls finish: a keyboard user's focus stays on the same thread's
    // button rather than falling back to the page (where the next Enter would do nothing).
    const focused = document.activeElement;
    const focusedThread = focused instanceof HTMLElement && this.list.contains(focused) ? focused.dataset['threadId'] : undefined;
    this.list.replaceChildren(...items);
    if (focusedThread !== undefined) {
      items.map((li) => li.querySelector('button')).find((b) => b?.dataset['threadId'] === focusedThread)?.focus();
    }
    const n = this.threads.length;
    this.status.textContent = n === 0 ? 'No threads yet: start one below or make a call.' : `${n} thread${n === 1 ? '' : 's'}, most recent first.`;
  }

  private item(t: Partial<ThreadSummary> & { thread_id: string }, isNew: boolean, selected: string | null): HTMLLIElement {
    const li = el('li', 'thread-row');
    const button = el('button', 'thread-item');
    button.type = 'button';
    button.dataset['testid'] = 'thread-item';
    button.dataset['threadId'] = t.thread_id;
    if (t.thread_id === selected) button.setAttribute('aria-current', 'true');
    // Watched: its calls (and those awaiting approval) reach this page as they happen.
    if (this.watches.has(t.thread_id)) button.dataset['live'] = 'true';
    button.append(el('span', 'thread-id', t.thread_id));
    const meta = el('span', 'thread-meta');
    if (isNew) {
      meta.textContent = 'new — no messages yet';
    } else {
      const count = Number.isFinite(t.message_count) ? Number(t.message_count) : 0;
      meta.append(el('span', 'thread-count', `${count} message${count === 1 ? '' : 's'}`));
      if (typeof t.updated_at === 'string') meta.append(document.createTextNode(' · '), timeElement(t.updated_at));
    }
    button.append(meta);
    button.addEventListener('click', () => this.choose(t.thread_id, isNew));
    li.append(button);
    return li;
  }
}
