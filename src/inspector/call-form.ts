/**
 * The call form: `project_cli` by hand (`tool/invoke`). It checks the input
 * is a JSON object before sending, suggests the session's actions, shows an
 * example input, and gives every call a fresh `tool_call_id` (reusing one
 * with the same args returns the stored outcome). A suggested action chosen
 * on a rendered card fills the form; the person still presses Call.
 */
import { EXAMPLES, expandAllowed, suggestions } from './actions.js';
import { byId, el, hide, parseJsonObject, setBusy, showError, str } from './dom.js';
import { describeError, type RpcClient } from './rpc-client.js';
import type { ChosenAction } from './ui-renderer.js';
import type { Conversation } from './conversation.js';
import type { ThreadList } from './threads.js';
import type { SessionOpenResult, ToolResponse } from './wire.js';

type Parsed = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

export class CallForm {
  private allowed: string[] = [];
  private readonly form = byId<HTMLFormElement>('call-form');
  private readonly module = byId<HTMLInputElement>('call-module');
  private readonly method = byId<HTMLInputElement>('call-method');
  private readonly input = byId<HTMLTextAreaElement>('call-input');
  private readonly inputError = byId('call-input-error');
  private readonly example = byId('call-input-example');
  private readonly thread = byId<HTMLInputElement>('call-thread');
  private readonly toolCallId = byId<HTMLInputElement>('call-tool-call-id');
  private readonly newId = byId<HTMLButtonElement>('call-new-id');
  private readonly submit = byId<HTMLButtonElement>('call-submit');
  private readonly status = byId('call-status');
  private readonly moduleOptions = byId('module-options');
  private readonly methodOptions = byId('method-options');

  constructor(
    private readonly rpc: () => RpcClient | null,
    private readonly session: () => SessionOpenResult | null,
    private readonly conversation: Conversation,
    private readonly threads: ThreadList,
    private readonly focusToken: () => void,
  ) {
    this.toolCallId.value = newToolCallId();
    this.form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void this.call();
    });
    this.input.addEventListener('input', () => void this.validate());
    this.module.addEventListener('input', () => {
      markRequired(this.module, true);
      this.suggest();
      this.showExample();
    });
    this.method.addEventListener('input', () => {
      markRequired(this.method, true);
      this.showExample();
    });
    this.newId.addEventListener('click', () => (this.toolCallId.value = newToolCallId()));
    document.addEventListener('toolgate:action', (ev) => this.fill((ev as CustomEvent<ChosenAction>).detail));
    this.suggest();
    this.showExample();
  }

  /** The session's `allowed_actions` (patterns) become the suggestions. */
  setAllowed(patterns: readonly string[]): void {
    this.allowed = expandAllowed(patterns);
    this.suggest();
  }

  /** The form follows the selected thread. */
  setThread(threadId: string): void {
    this.thread.value = threadId;
  }

  focus(): void {
    this.module.focus();
  }

  private async call(): Promise<void> {
    const rpc = this.rpc();
    const session = this.session();
    if (!rpc || !session) {
      this.setStatus('error', 'Open a session first.');
      this.focusToken();
      return;
    }
    const module = this.module.value.trim();
    const method = this.method.value.trim();
    markRequired(this.module, module !== '');
    markRequired(this.method, method !== '');
    if (!module || !method) {
      this.setStatus('error', 'Module and method are required.');
      (module ? this.method : this.module).focus();
      return;
    }
    const parsed = this.validate();
    if (!parsed.ok) {
      this.setStatus('error', 'Fix the input JSON first.');
      this.input.focus();
      return;
    }
    const selected = this.conversation.selection.threadId;
    const threadId = this.thread.value.trim() || selected || `insp-thread-${Date.now()}`;
    this.thread.value = threadId;
    const toolCallId = this.toolCallId.value.trim() || newToolCallId();
    this.toolCallId.value = toolCallId;
    const known = this.threads.has(threadId);
    if (threadId !== selected) await this.conversation.select(threadId, { isNew: !known });
    const live = this.rpc();
    if (!live || !this.session()) return;

    this.conversation.expectOwnCall(toolCallId);
    setBusy(this.submit, true, 'Calling…');
    this.setStatus('pending', `Calling ${module}.${method} (${toolCallId})…`);
    try {
      const response = await live.request<ToolResponse>('tool/invoke', {
        session_id: session.session_id,
        thread_id: threadId,
        tool_call_id: toolCallId,
        args: { module, method, input: parsed.value },
      });
      const status = str(response?.status);
      const text = Array.isArray(response?.content) ? response.content.map((c) => str(c?.text)).join('') : '';
      const projection = parseJsonObject(text);
      const error = projection?.['error'] as { code?: unknown; message?: unknown } | undefined;
      if (threadId === this.conversation.selection.threadId) {
        const seen = this.conversation.hasCard(toolCallId);
        const card = this.conversation.cardFor(toolCallId);
        if (!seen) {
          // No notification reached this page (should not happen): show the response itself.
          card.setTitle(module, method);
          card.setStatus(status, true);
          card.setOutcome(undefined, error);
          this.conversation.reveal(card);
        }
        card.setContent(text);
      }
      const kind = status === 'success' ? 'success' : status === 'partial' ? 'warning' : 'error';
      this.setStatus(kind, `Response: ${status || 'unknown'} (${toolCallId})${status === 'failure' && error ? ` — ${str(error.code)}: ${str(error.message)}` : ''}`);
      if (!known) await this.threads.refresh();
      if (threadId === this.conversation.selection.threadId) {
        this.conversation.markStarted();
        this.threads.render();
        await this.conversation.subscribe(threadId);
      }
      this.toolCallId.value = newToolCallId();
    } catch (err) {
      this.setStatus('error', `JSON-RPC error ${describeError(err)}`);
    } finally {
      setBusy(this.submit, false);
    }
  }

  private validate(): Parsed {
    const parsed = parseInput(this.input.value);
    if (parsed.ok) {
      this.input.removeAttribute('aria-invalid');
      hide(this.inputError);
    } else {
      this.input.setAttribute('aria-invalid', 'true');
      showError(this.inputError, parsed.message);
    }
    return parsed;
  }

  private fill(detail: ChosenAction | undefined): void {
    if (!detail || typeof detail !== 'object') return;
    this.module.value = str(detail.module);
    this.method.value = str(detail.method);
    this.input.value = JSON.stringify(detail.input ?? {}, null, 2);
    const selected = this.conversation.selection.threadId;
    if (selected) this.thread.value = selected;
    this.toolCallId.value = newToolCallId();
    markRequired(this.module, true);
    markRequired(this.method, true);
    this.validate();
    this.suggest();
    this.showExample();
    this.setStatus('idle', `Prepared ${str(detail.module)}.${str(detail.method)} — review the input and press Call.`);
    this.submit.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    this.submit.focus({ preventScroll: true });
  }

  private suggest(): void {
    const { modules, methods } = suggestions(this.allowed, this.module.value.trim());
    this.moduleOptions.replaceChildren(...modules.map(option));
    this.methodOptions.replaceChildren(...methods.map(option));
  }

  private showExample(): void {
    const key = `${this.module.value.trim()}.${this.method.value.trim()}`;
    const example = EXAMPLES[key];
    this.example.textContent = example ? `Example for ${key}: ${JSON.stringify(example)}` : '';
  }

  private setStatus(kind: 'idle' | 'pending' | 'success' | 'warning' | 'error', text: string): void {
    this.status.dataset['state'] = kind;
    this.status.textContent = text;
  }
}

function newToolCallId(): string {
  return `insp-${Date.now()}`;
}

/** The input field as a JSON object, or why not. */
export function parseInput(raw: string): Parsed {
  const text = raw.trim();
  if (text === '') return { ok: false, message: 'Input is empty: write a JSON object, {} for no fields.' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `Input is not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    return { ok: false, message: `Input must be a JSON object such as {"key": "value"}, not ${kind}.` };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

function markRequired(input: HTMLInputElement, ok: boolean): void {
  if (ok) input.removeAttribute('aria-invalid');
  else input.setAttribute('aria-invalid', 'true');
}

function option(value: string): HTMLOptionElement {
  const o = el('option');
  o.value = value;
  return o;
}
