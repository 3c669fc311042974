/**
 * The conversation of the selected thread: its history (`history/get`, ui
 * view, newest page first, older pages on request), then live `tool/result`
 * notifications through `thread/subscribe` — including calls other
 * connections make. One tool card per call.
 */
import { byId, el, placeholder, str, timeElement, type Announcer } from './dom.js';
import { RpcError, describeError, type RpcClient } from './rpc-client.js';
import { ToolCard } from './tool-card.js';
import type { Selection } from './threads.js';
import type { ThreadWatches } from './watches.js';
import type { HistoryGetResult, HistoryMessage, SessionOpenResult, ToolResultNotification } from './wire.js';

/** A `history/get` page, read defensively (a reply is not trusted to have every field). */
type HistoryPage = Partial<HistoryGetResult>;

export class Conversation {
  private selected: string | null = null;
  private selectedIsNew = false;
  private nextBefore: string | null = null;
  /** Bumped on every selection: an answer for an older selection is dropped. */
  private selectSeq = 0;
  private readonly cards = new Map<string, ToolCard>();
  /** Calls made from this page (the call form): their cards are always brought into view. */
  private readonly ownCalls = new Set<string>();
  private readonly list = byId('message-list');
  private readonly threadLabel = byId('conversation-thread');
  private readonly loadOlderButton = byId<HTMLButtonElement>('load-older');

  constructor(
    private readonly rpc: () => RpcClient | null,
    private readonly session: () => SessionOpenResult | null,
    private readonly watches: ThreadWatches,
    private readonly changed: () => void,
    private readonly announcer: Announcer,
  ) {
    this.loadOlderButton.addEventListener('click', () => void this.loadOlder());
  }

  get selection(): Selection {
    return { threadId: this.selected, isNew: this.selectedIsNew };
  }

  /** The selected thread now exists (a call stored into it). */
  markStarted(): void {
    this.selectedIsNew = false;
  }

  /** Shows a thread: its history, then live notifications. */
  async select(threadId: string, opts: { isNew?: boolean } = {}): Promise<void> {
    const rpc = this.rpc();
    const session = this.session();
    if (!rpc || !session) return;
    const seq = ++this.selectSeq;
    this.selected = threadId;
    this.selectedIsNew = Boolean(opts.isNew);
    this.nextBefore = null;
    this.cards.clear();
    this.threadLabel.textContent = threadId;
    this.loadOlderButton.hidden = true;
    this.changed();

    if (opts.isNew) {
      this.list.replaceChildren(placeholder('New thread: make a call to start it.'));
      return;
    }
    this.list.setAttribute('aria-busy', 'true');
    this.list.replaceChildren(placeholder('Loading history…'));
    try {
      const page = await rpc.request<HistoryPage>('history/get', { session_id: session.session_id, thread_id: threadId, view: 'ui' }, { timeoutMs: 30_000 });
      if (seq !== this.selectSeq) return;
      const messages = Array.isArray(page?.messages) ? page.messages : [];
      this.nextBefore = typeof page?.next_before === 'string' ? page.next_before : null;
      this.loadOlderButton.hidden = this.nextBefore === null;
      this.list.replaceChildren(...messages.map((m) => this.renderMessage(m)));
      if (messages.length === 0) this.list.append(placeholder('No messages yet.'));
      this.scrollToBottom();
    } catch (err) {
      if (seq !== this.selectSeq) return;
      if (err instanceof RpcError && err.dataCode === 'THREAD_NOT_FOUND') {
        this.selectedIsNew = true;
        this.changed();
        this.list.replaceChildren(placeholder('No such thread yet: make a call to start it.'));
        return;
      }
      this.list.replaceChildren(placeholder(`Could not load history: ${describeError(err)}`, 'error'));
      return;
    } finally {
      if (seq === this.selectSeq) this.list.removeAttribute('aria-busy');
    }
    await this.subscribe(threadId);
  }

  /**
   * Watches the thread live (idempotent). A thread once watched stays watched: the page
   * hears its calls, and the ones waiting for approval, whichever thread is shown.
   */
  async subscribe(threadId: string): Promise<void> {
    await this.watches.watch(threadId);
  }

  /** Reselects the thread that was shown (after a reconnect reopened the session). */
  async restore(): Promise<void> {
    if (this.selected) await this.select(this.selected, { isNew: this.selectedIsNew });
  }

  /** Empties the view (a new session, or sign-out). */
  reset(): void {
    this.selectSeq++;
    this.selected = null;
    this.selectedIsNew = false;
    this.nextBefore = null;
    this.cards.clear();
    this.threadLabel.textContent = '';
    this.loadOlderButton.hidden = true;
    this.list.replaceChildren(placeholder('Select or start a thread.'));
  }

  /** A `tool/result` notification (of any thread this connection watches or called). */
  onToolResult(n: ToolResultNotification): void {
    if (n.thread_id !== this.selected) return;
    const isNew = !this.cards.has(n.tool_call_id);
    const follow = isNew && (this.isNearBottom() || this.ownCalls.has(n.tool_call_id));
    const card = this.cardFor(n.tool_call_id);
    card.apply(n);
    // Scrolled to once its content is in: a card is empty when it is appended, and grows after.
    if (follow) this.reveal(card);
  }

  /** A call this page makes (the call form): its card is scrolled into view when it comes, wherever the reader is. */
  expectOwnCall(toolCallId: string): void {
    this.ownCalls.add(toolCallId);
  }

  /** The card of a call, appended to the conversation when it is new. */
  cardFor(toolCallId: string): ToolCard {
    let card = this.cards.get(toolCallId);
    if (!card) {
      card = new ToolCard(toolCallId);
      this.cards.set(toolCallId, card);
      this.list.querySelectorAll(':scope > .placeholder').forEach((p) => p.remove());
      this.list.append(card.li);
    }
    return card;
  }

  /** Brings the card into view: the list scrolls, and the page too when the list is below the fold. */
  reveal(card: ToolCard): void {
    card.li.scrollIntoView({ block: 'nearest' });
  }

  hasCard(toolCallId: string): boolean {
    return this.cards.has(toolCallId);
  }

  private async loadOlder(): Promise<void> {
    const rpc = this.rpc();
    const session = this.session();
    if (!rpc || !session || !this.selected || !this.nextBefore) return;
    const seq = this.selectSeq;
    const button = this.loadOlderButton;
    button.disabled = true;
    try {
      const page = await rpc.request<HistoryPage>(
        'history/get',
        { session_id: session.session_id, thread_id: this.selected, view: 'ui', before: this.nextBefore },
        { timeoutMs: 30_000 },
      );
      if (seq !== this.selectSeq) return;
      const messages = Array.isArray(page?.messages) ? page.messages : [];
      this.nextBefore = typeof page?.next_before === 'string' ? page.next_before : null;
      this.list.querySelector(':scope > .placeholder')?.remove();
      this.list.prepend(...messages.map((m) => this.renderMessage(m)));
    } catch (err) {
      this.announcer.say(`Could not load older messages: ${describeError(err)}`);
    } finally {
      button.disabled = false;
      button.hidden = this.nextBefore === null;
    }
  }

  private renderMessage(m: HistoryMessage): HTMLLIElement {
    if (!m || typeof m !== 'object') return placeholder('Malformed message');
    if (m.role === 'tool') {
      const card = ToolCard.fromHistory(m);
      this.cards.set(card.toolCallId, card);
      return card.li;
    }
    const role = typeof m.role === 'string' ? m.role : 'unknown';
    const li = el('li', `message message-${role === 'user' || role === 'assistant' ? role : 'other'}`);
    li.dataset['testid'] = 'message';
    li.dataset['role'] = role;
    if (m.id !== undefined) li.dataset['messageId'] = String(m.id);
    const head = el('p', 'message-head');
    head.append(el('span', 'message-role', role));
    if (typeof m.created_at === 'string') head.append(document.createTextNode(' · '), timeElement(m.created_at));
    li.append(head, el('p', 'bubble', str(m.content)));
    return li;
  }

  private isNearBottom(): boolean {
    return this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 80;
  }

  private scrollToBottom(): void {
    this.list.scrollTop = this.list.scrollHeight;
  }
}
