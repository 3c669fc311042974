/**
 * Reference renderer for the toolgate tool UI vocabulary (`ui_schema`, version "1";
 * see schemas/ui-schema.json). Plain DOM, no framework, no markup parsing: every
 * string that comes from the data goes through textContent or an attribute, never
 * innerHTML, because tool results are untrusted.
 *
 *   import { renderUiSchema } from './ui-renderer.js';
 *   container.append(renderUiSchema(uiSchema, { onAction: (a) => … }));
 *
 * `renderUiSchema` never throws: a component it does not know (or a malformed one)
 * renders a small "unsupported component" note instead, so one bad node cannot hide
 * the rest of a result. Choosing a suggested action calls `options.onAction(action)`
 * and also dispatches a bubbling `toolgate:action` CustomEvent whose `detail` is
 * `{label, module, method, input}`.
 *
 * The input is typed `unknown` on purpose: it arrives from the wire, and every
 * field is checked before use. The vocabulary's types (generated from the schema)
 * name what a valid one holds.
 */
import type { UiComponent } from './wire.js';

/** The vocabulary version this renderer implements. */
export const UI_SCHEMA_VERSION = '1';

/** Component types this renderer knows (the `oneOf` of schemas/ui-schema.json). */
export const COMPONENT_TYPES: readonly UiComponent['type'][] = Object.freeze([
  'card', 'list', 'stack', 'field', 'datetime_range', 'status_badge', 'text', 'actions',
] as const);

const TONES = new Set(['success', 'warning', 'danger', 'info', 'neutral']);
const TEXT_STYLES = new Set(['body', 'muted', 'emphasis', 'code']);
const MAX_DEPTH = 24;

/** A suggested action, as a front end receives it when a person chooses it. */
export interface ChosenAction {
  label: string;
  module: string;
  method: string;
  input: Record<string, unknown>;
}

export interface RenderOptions {
  /** Called when a suggested action button is chosen. */
  onAction?: (action: ChosenAction) => void;
  /** BCP 47 locale for dates (default: the browser's). */
  locale?: string;
  /** Heading level of the schema title (2–6, default 3); card titles use the levels below it. */
  headingLevel?: number;
}

interface Ctx {
  options: RenderOptions;
  level: number;
}

type Node = Record<string, unknown>;

/** Renders a whole `ui_schema` into a detached element. */
export function renderUiSchema(uiSchema: unknown, options: RenderOptions = {}): HTMLElement {
  const root = el('div', 'tg-ui');
  root.dataset['testid'] = 'ui-root';
  const level = clampLevel(options.headingLevel ?? 3);
  const ctx: Ctx = { options, level: level + (isObject(uiSchema) && typeof uiSchema['title'] === 'string' ? 1 : 0) };

  if (!isObject(uiSchema)) {
    root.append(unsupported('ui_schema is not an object'));
    return root;
  }
  if (uiSchema['version'] !== UI_SCHEMA_VERSION) {
    root.append(unsupported(`ui_schema version ${JSON.stringify(String(uiSchema['version']))} is not supported`));
    return root;
  }
  if (typeof uiSchema['title'] === 'string' && uiSchema['title'] !== '') {
    const h = el(`h${level}`, 'tg-ui-title', uiSchema['title']);
    h.dataset['testid'] = 'ui-title';
    root.append(h);
  }
  root.append(renderComponent(uiSchema['component'], ctx, 0));
  return root;
}

/** Renders one component (and its children). Exported for front ends that embed parts of a UI. */
export function renderUiComponent(component: unknown, options: RenderOptions = {}): HTMLElement {
  return renderComponent(component, { options, level: clampLevel(options.headingLevel ?? 3) }, 0);
}

function renderComponent(component: unknown, ctx: Ctx, depth: number): HTMLElement {
  if (depth > MAX_DEPTH) return unsupported('component nesting is too deep');
  if (!isObject(component)) return unsupported('component is not an object');
  try {
    switch (component['type']) {
      case 'card': return renderCard(component, ctx, depth);
      case 'list': return renderList(component, ctx, depth);
      case 'stack': return renderStack(component, ctx, depth);
      case 'field': return renderField(component);
      case 'datetime_range': return renderDatetimeRange(component, ctx);
      case 'status_badge': return renderStatusBadge(component);
      case 'text': return renderText(component);
      case 'actions': return renderActions(component, ctx);
      default:
        return unsupported(`unsupported component ${JSON.stringify(String(component['type']))}`, component['type']);
    }
  } catch {
    // A malformed node must not take the rest of the UI down with it.
    return unsupported(`could not render ${JSON.stringify(String(component['type']))} component`, component['type']);
  }
}

function renderChildren(children: unknown, ctx: Ctx, depth: number): HTMLElement[] {
  return asArray(children).map((child) => renderComponent(child, ctx, depth + 1));
}

function renderCard(c: Node, ctx: Ctx, depth: number): HTMLElement {
  const card = el('article', 'tg-card');
  card.dataset['testid'] = 'ui-card';
  const header = el('header', 'tg-card-header');
  const level = clampLevel(ctx.level);
  const title = el(`h${level}`, 'tg-card-title', str(c['title']));
  title.dataset['testid'] = 'ui-card-title';
  header.append(title);
  if (typeof c['subtitle'] === 'string' && c['subtitle'] !== '') {
    const sub = el('p', 'tg-card-subtitle', c['subtitle']);
    sub.dataset['testid'] = 'ui-card-subtitle';
    header.append(sub);
  }
  const body = el('div', 'tg-card-body');
  body.append(...renderChildren(c['children'], { ...ctx, level: level + 1 }, depth));
  card.append(header, body);
  return card;
}

function renderList(c: Node, ctx: Ctx, depth: number): HTMLElement {
  const items = asArray(c['items']);
  const wrap = el('div', 'tg-list');
  wrap.dataset['testid'] = 'ui-list';
  wrap.dataset['count'] = String(items.length);
  if (items.length === 0) {
    const text = typeof c['empty_text'] === 'string' && c['empty_text'] !== '' ? c['empty_text'] : 'No items.';
    const empty = el('p', 'tg-list-empty', text);
    empty.dataset['testid'] = 'ui-list-empty';
    wrap.append(empty);
    return wrap;
  }
  const ul = el('ul', 'tg-list-items');
  for (const item of items) {
    const li = el('li', 'tg-list-item');
    li.append(renderComponent(item, ctx, depth + 1));
    ul.append(li);
  }
  wrap.append(ul);
  return wrap;
}

function renderStack(c: Node, ctx: Ctx, depth: number): HTMLElement {
  const stack = el('div', 'tg-stack');
  stack.dataset['testid'] = 'ui-stack';
  stack.append(...renderChildren(c['children'], ctx, depth));
  return stack;
}

function renderField(c: Node): HTMLElement {
  // A <dl> per field keeps each label/value pair semantic wherever it appears.
  const dl = el('dl', 'tg-field');
  dl.dataset['testid'] = 'ui-field';
  dl.append(el('dt', 'tg-field-label', str(c['label'])), el('dd', 'tg-field-value', str(c['value'])));
  return dl;
}

function renderStatusBadge(c: Node): HTMLElement {
  const tone = typeof c['tone'] === 'string' && TONES.has(c['tone']) ? c['tone'] : 'neutral';
  const badge = el('span', `tg-badge tg-tone-${tone}`, str(c['label']));
  badge.dataset['testid'] = 'ui-badge';
  badge.dataset['tone'] = tone;
  return badge;
}

function renderText(c: Node): HTMLElement {
  const style = typeof c['style'] === 'string' && TEXT_STYLES.has(c['style']) ? c['style'] : 'body';
  const p = el('p', `tg-text tg-text-${style}`);
  p.dataset['testid'] = 'ui-text';
  if (style === 'code') p.append(el('code', '', str(c['text'])));
  else if (style === 'emphasis') p.append(el('strong', '', str(c['text'])));
  else p.textContent = str(c['text']);
  return p;
}

function renderActions(c: Node, ctx: Ctx): HTMLElement {
  const group = el('div', 'tg-actions');
  group.dataset['testid'] = 'ui-actions';
  group.setAttribute('role', 'group');
  group.setAttribute('aria-label', 'Suggested actions');
  for (const item of asArray(c['items'])) {
    if (!isObject(item) || typeof item['module'] !== 'string' || typeof item['method'] !== 'string') {
      group.append(unsupported('malformed action'));
      continue;
    }
    const action: ChosenAction = {
      label: str(item['label']) || `${item['module']}.${item['method']}`,
      module: item['module'],
      method: item['method'],
      input: isObject(item['input']) ? item['input'] : {},
    };
    const button = el('button', 'tg-action', action.label) as HTMLButtonElement;
    button.type = 'button';
    button.dataset['testid'] = 'ui-action';
    button.dataset['module'] = action.module;
    button.dataset['method'] = action.method;
    button.title = `Prepare a project_cli call: ${action.module}.${action.method}`;
    button.addEventListener('click', () => {
      const detail: ChosenAction = { ...action, input: structuredCloneSafe(action.input) };
      try {
        ctx.options.onAction?.(detail);
      } finally {
        button.dispatchEvent(new CustomEvent('toolgate:action', { bubbles: true, composed: true, detail }));
      }
    });
    group.append(button);
  }
  return group;
}

// ---- datetime_range ------------------------------------------------------------------------

function renderDatetimeRange(c: Node, ctx: Ctx): HTMLElement {
  const wrap = el('div', 'tg-datetime');
  wrap.dataset['testid'] = 'ui-datetime';
  if (typeof c['label'] === 'string' && c['label'] !== '') wrap.append(el('span', 'tg-datetime-label', c['label']));
  const start = str(c['start_at']);
  const end = str(c['end_at']);
  const zone = typeof c['timezone'] === 'string' && isValidTimeZone(c['timezone']) ? c['timezone'] : null;
  const locale = ctx.options.locale;
  const s = describeInstant(start, zone, locale);
  const e = describeInstant(end, zone, locale);

  const startEl = timeEl(start, s ? `${s.date}, ${s.time}` : start);
  const sameDay = s && e && s.date === e.date && s.zoneLabel === e.zoneLabel;
  const endText = e ? (sameDay ? e.time : `${e.date}, ${e.time}`) : end;
  const endEl = timeEl(end, endText);
  const range = el('span', 'tg-datetime-range');
  range.append(startEl, document.createTextNode(' – '), endEl);
  wrap.append(range);
  const zoneLabel = e?.zoneLabel ?? s?.zoneLabel;
  if (zoneLabel) wrap.append(el('span', 'tg-datetime-zone', zoneLabel));
  return wrap;
}

function timeEl(iso: string, text: string): HTMLElement {
  const t = el('time', 'tg-time', text) as HTMLTimeElement;
  t.dateTime = iso; // the original ISO string, untouched
  t.title = iso;
  return t;
}

const ISO_OFFSET = /(Z|[+-]\d{2}:?\d{2})$/i;

interface Instant {
  date: string;
  time: string;
  zoneLabel: string;
}

/**
 * Formats an ISO instant for display: in `zone` when one is given, otherwise at the UTC offset
 * the instant was written with (an event at 10:00+08:00 shows as 10:00, labelled UTC+08:00).
 * Returns null when the string is not a date-time.
 */
function describeInstant(iso: string, zone: string | null, locale: string | undefined): Instant | null {
  if (!/^\d{4}-\d{2}-\d{2}T/.test(iso)) return null;
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return null;
  const dateOpts: Intl.DateTimeFormatOptions = { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric' };
  const timeOpts: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit' };
  if (zone) {
    return {
      date: fmt(locale, { ...dateOpts, timeZone: zone }, ms),
      time: fmt(locale, { ...timeOpts, timeZone: zone }, ms),
      zoneLabel: zoneName(locale, zone, ms),
    };
  }
  const m = ISO_OFFSET.exec(iso);
  if (!m) {
    // No offset: a floating local date-time; show it in the browser's zone, unlabelled.
    return { date: fmt(locale, dateOpts, ms), time: fmt(locale, timeOpts, ms), zoneLabel: '' };
  }
  let offsetMin = 0;
  const written = m[1]!;
  if (written.toUpperCase() !== 'Z') {
    const sign = written[0] === '-' ? -1 : 1;
    const digits = written.slice(1).replace(':', '');
    offsetMin = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4)));
  }
  // Wall-clock time at the written offset: shift the instant, then format it as UTC.
  const shifted = ms + offsetMin * 60_000;
  return {
    date: fmt(locale, { ...dateOpts, timeZone: 'UTC' }, shifted),
    time: fmt(locale, { ...timeOpts, timeZone: 'UTC' }, shifted),
    zoneLabel: offsetLabel(offsetMin),
  };
}

function offsetLabel(min: number): string {
  if (min === 0) return 'UTC';
  const sign = min < 0 ? '−' : '+';
  const abs = Math.abs(min);
  return `UTC${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

function fmt(locale: string | undefined, opts: Intl.DateTimeFormatOptions, ms: number): string {
  try {
    return new Intl.DateTimeFormat(locale, opts).format(ms);
  } catch {
    return new Intl.DateTimeFormat(undefined, { ...opts, timeZone: 'UTC' }).format(ms);
  }
}

function zoneName(locale: string | undefined, zone: string, ms: number): string {
  try {
    const part = new Intl.DateTimeFormat(locale, { timeZone: zone, timeZoneName: 'short' }).formatToParts(ms).find((p) => p.type === 'timeZoneName');
    return part ? `${zone} (${part.value})` : zone;
  } catch {
    return zone;
  }
}

function isValidTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

// ---- helpers ---------------------------------------------------------------------------------

function unsupported(reason: string, type?: unknown): HTMLElement {
  const note = el('p', 'tg-unsupported', `Unsupported component: ${reason}.`);
  note.dataset['testid'] = 'ui-unsupported';
  note.setAttribute('role', 'note');
  if (type !== undefined) note.dataset['componentType'] = String(type);
  return note;
}

/**
 * Creates an element; `text` is set with textContent only. The renderer keeps
 * its own copy (not dom.ts) so it stays one self-contained module front ends
 * can lift.
 */
function el(tag: string, className: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function isObject(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
function str(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
}
function clampLevel(n: number): number {
  return Math.max(2, Math.min(6, Math.trunc(Number(n)) || 3));
}
function structuredCloneSafe<T>(v: T): T {
  try {
    return structuredClone(v);
  } catch {
    return JSON.parse(JSON.stringify(v)) as T;
  }
}
