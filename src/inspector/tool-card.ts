/**
 * A tool call in the conversation: one card per `tool_call_id`, built from a
 * `history/get` tool message, from `tool/result` notifications as they
 * arrive (batch items first, then the final one), or from the `tool/invoke`
 * response when no notification reached this page.
 *
 * A failure shows what a person needs to fix the call, not only its code:
 * the message, each input issue as `path: what is wrong`, and — when the
 * daemon says — the actions this session may call.
 */
import { cssSafe, el, isObject, str, strArray } from './dom.js';
import { renderUiSchema } from './ui-renderer.js';
import type { HistoryMessage, InputIssue, ToolResultNotification, ToolStatus } from './wire.js';

export type CardStatus = ToolStatus | 'unknown';

/** The protocol's statuses (the Record's keys must be exactly ToolStatus's: the compiler keeps them in step). */
const STATUSES: Record<ToolStatus, true> = { success: true, partial: true, failure: true };

export class ToolCard {
  readonly li: HTMLLIElement;
  private readonly article: HTMLElement;
  private readonly title: HTMLElement;
  private readonly status: HTMLElement;
  private readonly main: HTMLElement;
  private readonly progress: HTMLElement;
  private readonly progressHead: HTMLElement;
  private readonly partials: HTMLOListElement;
  private readonly details: HTMLDetailsElement;
  private readonly rawSummary: HTMLElement;
  private readonly raw: HTMLElement;
  /** The stored projection text is shown (it wins over a notification's body). */
  private hasContent = false;

  constructor(readonly toolCallId: string) {
    this.li = el('li', 'message message-tool');
    this.li.dataset['testid'] = 'message';
    this.li.dataset['role'] = 'tool';
    this.article = el('article', 'tool-card');
    this.article.dataset['testid'] = 'tool-card';
    this.article.dataset['toolCallId'] = toolCallId;
    const header = el('header', 'tool-card-header');
    this.title = el('h3', 'tool-card-title', 'project_cli');
    this.title.id = `tool-card-title-${cssSafe(toolCallId)}-${Math.random().toString(36).slice(2, 8)}`;
    this.article.setAttribute('aria-labelledby', this.title.id);
    this.status = el('span', 'tool-status', '…');
    this.status.dataset['testid'] = 'tool-status';
    const id = el('code', 'tool-card-id', toolCallId);
    id.title = 'tool_call_id';
    header.append(this.title, this.status, id);
    this.main = el('div', 'tool-card-main');
    this.main.dataset['testid'] = 'tool-card-main';
    this.progress = el('div', 'tool-card-progress');
    this.progress.hidden = true;
    this.partials = el('ol', 'tool-card-partials');
    this.partials.dataset['testid'] = 'tool-card-partials';
    this.progressHead = el('p', 'tool-card-progress-head', 'Streamed items');
    this.progress.append(this.progressHead, this.partials);
    this.details = el('details', 'tool-card-raw');
    this.rawSummary = el('summary', '', 'Raw content');
    this.raw = el('pre', 'raw');
    this.raw.dataset['testid'] = 'tool-card-raw';
    this.raw.tabIndex = 0;
    this.details.append(this.rawSummary, this.raw);
    this.article.append(header, this.main, this.progress, this.details);
    this.li.append(this.article);
  }

  /** A `role: "tool"` message of `history/get` (ui view): the stored projection and the replayed UI. */
  static fromHistory(m: HistoryMessage): ToolCard {
    const card = new ToolCard(str(m.tool_call_id) || `message-${str(m.id)}`);
    const projection = parseProjection(m.content);
    card.setTitle(projection.module, projection.method);
    const status = str(m.status) || projection.status;
    card.setStatus(status, true);
    card.setOutcome(m.ui_schema, status === 'failure' || projection.error ? projection.error : undefined);
    card.setContent(m.content);
    if (!m.ui_schema && !projection.error) card.details.open = true;
    return card;
  }

  setTitle(module: string, method: string): void {
    if (module && method) this.title.textContent = `${module}.${method}`;
  }

  setStatus(status: string, final: boolean): void {
    const s: CardStatus = Object.hasOwn(STATUSES, status) ? (status as ToolStatus) : 'unknown';
    this.article.dataset['status'] = s;
    this.article.dataset['final'] = final ? 'true' : 'false';
    this.status.className = `tool-status tool-status-${final ? s : 'running'}`;
    const n = this.partials.childElementCount;
    this.status.textContent = final ? s : `running · ${n} item${n === 1 ? '' : 's'}`;
  }

  /** The projection text, exactly the bytes the daemon stored or returned. */
  setContent(text: string): void {
    this.raw.textContent = text;
    this.rawSummary.textContent = 'Raw content (projection text)';
    this.hasContent = true;
  }

  /** The main body: the error (when there is one) and the rendered `ui_schema`. */
  setOutcome(uiSchema: unknown, error: unknown): void {
    const nodes: HTMLElement[] = [];
    if (isObject(error)) nodes.push(renderToolError(error));
    if (uiSchema !== undefined && uiSchema !== null) nodes.push(renderUiSchema(uiSchema, { headingLevel: 4 }));
    else if (nodes.length === 0) nodes.push(el('p', 'muted', 'This action has no tool UI; see the raw content.'));
    this.main.replaceChildren(...nodes);
  }

  /** Applies one `tool/result` of this call: a batch item (non-final) or the final outcome. */
  apply(n: ToolResultNotification): void {
    const args = n.tool_call_args;
    this.setTitle(str(args?.module) || str(n.result?.module) || str(n.error?.module), str(args?.method) || str(n.result?.method) || str(n.error?.method));
    if (!n.final) {
      this.progress.hidden = false;
      const item = el('li', 'partial-item');
      item.dataset['testid'] = 'tool-card-partial';
      if (n.ui_schema) item.append(renderUiSchema(n.ui_schema, { headingLevel: 5 }));
      else item.append(el('p', '', summarizePartial(n)));
      this.partials.append(item);
      this.setStatus(str(n.status) || 'partial', false);
      if (!this.main.hasChildNodes()) this.main.append(el('p', 'muted', 'Receiving items…'));
      if (!this.hasContent) this.showRaw('Raw notification', n);
      return;
    }
    this.setStatus(str(n.status), true);
    this.setOutcome(n.ui_schema, n.status === 'failure' ? (n.error ?? {}) : n.error);
    if (this.partials.childElementCount > 0) this.progressHead.textContent = `Streamed items (${this.partials.childElementCount})`;
    if (!this.hasContent) this.showRaw('Raw result', n);
    if (!n.ui_schema && n.status !== 'failure') this.details.open = true;
  }

  private showRaw(summary: string, n: ToolResultNotification): void {
    const body: Record<string, unknown> = { status: n.status };
    if (n.result !== undefined) body['result'] = n.result;
    if (n.error !== undefined) body['error'] = n.error;
    this.raw.textContent = JSON.stringify(body, null, 2);
    this.rawSummary.textContent = summary;
  }
}

/** What a projection text says, as far as a card shows it. */
export function parseProjection(text: unknown): { status: string; module: string; method: string; error?: Record<string, unknown> } {
  let value: unknown;
  try {
    value = typeof text === 'string' ? JSON.parse(text) : undefined;
  } catch {
    value = undefined;
  }
  if (!isObject(value)) return { status: '', module: '', method: '' };
  const error = isObject(value['error']) ? value['error'] : undefined;
  return {
    status: str(value['status']),
    module: str(value['module'] ?? error?.['module']),
    method: str(value['method'] ?? error?.['method']),
    ...(error ? { error } : {}),
  };
}

/**
 * A tool error as a person reads it: `CODE message`, then each input issue
 * on its own line (`date: expected a date (YYYY-MM-DD)`), then the actions
 * the session may call when the daemon listed them. The `input_schema` stays
 * in the raw content.
 */
export function renderToolError(error: Record<string, unknown>): HTMLElement {
  const box = el('div', 'tool-error');
  box.dataset['testid'] = 'tool-error';
  const head = el('p', 'tool-error-head');
  const code = el('strong', 'tool-error-code', str(error['code']) || 'ERROR');
  code.dataset['testid'] = 'tool-error-code';
  const message = el('span', 'tool-error-message', str(error['message']));
  message.dataset['testid'] = 'tool-error-message';
  head.append(code, document.createTextNode(' '), message);
  box.append(head);

  const issues = issuesOf(error['issues']);
  if (issues.length > 0) {
    const list = el('ul', 'tool-error-issues');
    list.dataset['testid'] = 'tool-error-issues';
    list.setAttribute('aria-label', 'Input problems');
    for (const issue of issues) {
      const li = el('li', 'tool-error-issue');
      li.dataset['testid'] = 'tool-error-issue';
      li.append(el('code', 'tool-error-path', issue.path || '(input)'), document.createTextNode(`: ${issue.message}`));
      const expected = str((issue as { expected?: unknown }).expected);
      if (expected && !issue.message.includes(expected)) li.append(el('span', 'tool-error-expected', ` (expects ${expected})`));
      list.append(li);
    }
    box.append(list);
  }

  const allowed = strArray(error['allowed_actions']);
  if (allowed.length > 0) {
    const p = el('p', 'tool-error-allowed');
    p.dataset['testid'] = 'tool-error-allowed';
    p.append(document.createTextNode('This session may call: '));
    allowed.forEach((a, i) => {
      if (i > 0) p.append(document.createTextNode(', '));
      p.append(el('code', '', a));
    });
    box.append(p);
  }
  return box;
}

function issuesOf(v: unknown): InputIssue[] {
  if (!Array.isArray(v)) return [];
  return v.filter(isObject).map((i) => ({ ...i, path: str(i['path']), message: str(i['message']) }) as InputIssue);
}

function summarizePartial(n: ToolResultNotification): string {
  const data = n.result?.data as { index?: unknown; ok?: unknown; event?: { title?: unknown }; error?: { code?: unknown; message?: unknown } } | undefined;
  if (data && typeof data === 'object' && 'index' in data) {
    if (data.ok) return `Item ${str(data.index)}: created${data.event?.title ? ` “${str(data.event.title)}”` : ''}`;
    return `Item ${str(data.index)}: failed — ${str(data.error?.code)} ${str(data.error?.message)}`.trim();
  }
  if (n.error) return `${str(n.error.code)}: ${str(n.error.message)}`;
  return `${str(n.status)} item`;
}
