/**
 * Small DOM helpers shared by the inspector's parts. The one rule they keep:
 * every string that comes from the wire goes into the page through
 * `textContent` or an attribute, never as markup.
 */

/** Creates an element; `text` is set with textContent only. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, className = '', text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The element with this id, typed by the caller; a missing one is a bug in index.html. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`index.html has no #${id}`);
  return node as T;
}

/** A value from the wire as display text. */
export function str(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
}

export function strArray(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A JSON object parsed from text, or null (the projection, a raw content). */
export function parseJsonObject(text: unknown): Record<string, unknown> | null {
  if (typeof text !== 'string' || text === '') return null;
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? v : null;
  } catch {
    return null;
  }
}

export function showError(node: HTMLElement, text: string): void {
  node.textContent = text;
  node.hidden = false;
}

export function hide(node: HTMLElement): void {
  node.hidden = true;
  node.textContent = '';
}

/** Disables a button while its action runs, with a busy label; restores it after. */
export function setBusy(button: HTMLButtonElement, busy: boolean, busyText?: string): void {
  if (busy) {
    button.dataset['label'] ??= button.textContent ?? '';
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
    if (busyText) button.textContent = busyText;
  } else {
    button.disabled = false;
    button.removeAttribute('aria-busy');
    if (button.dataset['label'] !== undefined) {
      button.textContent = button.dataset['label'];
      delete button.dataset['label'];
    }
  }
}

export function placeholder(text: string, kind?: 'error'): HTMLLIElement {
  return el('li', `placeholder${kind ? ` placeholder-${kind}` : ''}`, text);
}

/** An ISO timestamp as a `<time>`: formatted for the reader, the original kept in `datetime` and `title`. */
export function timeElement(iso: string): HTMLTimeElement {
  const t = el('time', '', iso);
  t.dateTime = iso;
  const ms = Date.parse(iso);
  if (!Number.isNaN(ms)) {
    t.textContent = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(ms);
    t.title = iso;
  }
  return t;
}

/** Polite announcements for screen readers: the last few, in the page's live region. */
export class Announcer {
  constructor(private readonly region: HTMLElement) {}

  say(text: string): void {
    this.region.append(el('p', '', text));
    while (this.region.childElementCount > 5) this.region.firstElementChild?.remove();
  }
}

export function cssSafe(s: string): string {
  return s.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40);
}
