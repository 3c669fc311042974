// Reference renderer for the toolgate tool UI vocabulary (`ui_schema`, version "1";
// see schemas/ui-schema.json). Plain DOM, no framework, no markup parsing: every string that
// comes from the data goes through textContent or an attribute, never innerHTML, because tool
// results are untrusted.
//
//   import { renderUiSchema } from './ui-renderer.js';
//   container.append(renderUiSchema(uiSchema, { onAction: (a) => … }));
//
// `renderUiSchema` never throws: a component it does not know (or a malformed one) renders a
// small "unsupported component" note instead, so one bad node cannot hide the rest of a result.
// Choosing a suggested action calls `options.onAction(action)` and also dispatches a bubbling
// `toolgate:action` CustomEvent whose `detail` is `{label, module, method, input}`.

/** The vocabulary version this renderer implements. */
export const UI_SCHEMA_VERSION = '1';

/** Component types this renderer knows (the `oneOf` of schemas/ui-schema.json). */
export const COMPONENT_TYPES = Object.freeze([
  'card', 'list', 'stack', 'field', 'datetime_range', 'status_badge', 'text', 'actions',
]);

const TONES = new Set(['success', 'warning', 'danger', 'info', 'neutral']);
const TEXT_STYLES = new Set(['body', 'muted', 'emphasis', 'code']);
const MAX_DEPTH = 24;

/**
 * @typedef {object} RenderOptions
 * @property {(action: {label: string, module: string, method: string, input: object}) => void} [onAction]
 *   called when a suggested action button is chosen.
 * @property {string} [locale] BCP 47 locale for dates (default: the browser's).
 * @property {number} [headingLevel] heading level of the schema title (2–6, default 3); card
 *   titles use the levels below it.
 */

/**
 * Renders a whole `ui_schema` into a detached element.
 * @param {unknown} uiSchema
 * @param {RenderOptions} [options]
 * @returns {HTMLElement}
 */
export function renderUiSchema(uiSchema, options = {}) {
  const root = el('div', 'tg-ui');
  root.dataset.testid = 'ui-root';
  const level = clampLevel(options.headingLevel ?? 3);
  const ctx = { options, level: level + (isObject(uiSchema) && typeof uiSchema.title === 'string' ? 1 : 0) };

  if (!isObject(uiSchema)) {
    root.append(unsupported('ui_schema is not an object'));
    return root;
  }
  if (uiSchema.version !== UI_SCHEMA_VERSION) {
    root.append(unsupported(`ui_schema version ${JSON.stringify(String(uiSchema.version))} is not supported`));
    return root;
  }
  if (typeof uiSchema.title === 'string' && uiSchema.title !== '') {
    const h = el(`h${level}`, 'tg-ui-title', uiSchema.title);
    h.dataset.testid = 'ui-title';
    root.append(h);
  }
  root.append(renderComponent(uiSchema.component, ctx, 0));
  return root;
}

/**
 * Renders one component (and its children). Exported for front ends that embed parts of a UI.
 * @param {unknown} component
 * @param {RenderOptions} [options]
 * @returns {HTMLElement}
 */
export function renderUiComponent(component, options = {}) {
  return renderComponent(component, { options, level: clampLevel(options.headingLevel ?? 3) }, 0);
}

function renderComponent(component, ctx, depth) {
  if (depth > MAX_DEPTH) return unsupported('component nesting is too deep');
  if (!isObject(component)) return unsupported('component is not an object');
  try {
    switch (component.type) {
      case 'card': return renderCard(component, ctx, depth);
      case 'list': return renderList(component, ctx, depth);
      case 'stack': return renderStack(component, ctx, depth);
      case 'field': return renderField(component);
      case 'datetime_range': return renderDatetimeRange(component, ctx);
      case 'status_badge': return renderStatusBadge(component);
      case 'text': return renderText(component);
      case 'actions': return renderActions(component, ctx);
      default:
        return unsupported(`unsupported component ${JSON.stringify(String(component.type))}`, component.type);
    }
  } catch (err) {
    // A malformed node must not take the rest of the UI down with it.
    return unsupported(`could not render ${JSON.stringify(String(component.type))} component`, component.type);
  }
}

function renderChildren(children, ctx, depth) {
  return asArray(children).map((child) => renderComponent(child, ctx, depth + 1));
}

function renderCard(c, ctx, depth) {
  const card = el('article', 'tg-card');
  card.dataset.testid = 'ui-card';
  const header = el('header', 'tg-card-header');
  const level = clampLevel(ctx.level);
  const title = el(`h${level}`, 'tg-card-title', str(c.title));
  title.dataset.testid = 'ui-card-title';
  header.append(title);
  if (typeof c.subtitle === 'string' && c.subtitle !== '') {
    const sub = el('p', 'tg-card-subtitle', c.subtitle);
    sub.dataset.testid = 'ui-card-subtitle';
    header.append(sub);
  }
  const body = el('div', 'tg-card-body');
  body.append(...renderChildren(c.children, { ...ctx, level: level + 1 }, depth));
  card.append(header, body);
  return card;
}

function renderList(c, ctx, depth) {
  const items = asArray(c.items);
  const wrap = el('div', 'tg-list');
  wrap.dataset.testid = 'ui-list';
  wrap.dataset.count = String(items.length);
  if (items.length === 0) {
    const empty = el('p', 'tg-list-empty', typeof c.empty_text === 'string' && c.empty_text !== '' ? c.empty_text : 'No items.');
    empty.dataset.testid = 'ui-list-empty';
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

function renderStack(c, ctx, depth) {
  const stack = el('div', 'tg-stack');
  stack.dataset.testid = 'ui-stack';
  stack.append(...renderChildren(c.children, ctx, depth));
  return stack;
}

function renderField(c) {
  // A <dl> per field keeps each label/value pair semantic wherever it appears.
  const dl = el('dl', 'tg-field');
  dl.dataset.testid = 'ui-field';
  const dt = el('dt', 'tg-field-label', str(c.label));
  const dd = el('dd', 'tg-field-value', str(c.value));
  dl.append(dt, dd);
  return dl;
}

function renderStatusBadge(c) {
  const tone = TONES.has(c.tone) ? c.tone : 'neutral';
  const badge = el('span', `tg-badge tg-tone-${tone}`, str(c.label));
  badge.dataset.testid = 'ui-badge';
  badge.dataset.tone = tone;
  return badge;
}

function renderText(c) {
  const style = TEXT_STYLES.has(c.style) ? c.style : 'body';
  const p = el('p', `tg-text tg-text-${style}`);
  p.dataset.testid = 'ui-text';
  if (style === 'code') p.append(el('code', '', str(c.text)));
  else if (style === 'emphasis') p.append(el('strong', '', str(c.text)));
  else p.textContent = str(c.text);
  return p;
}

function renderActions(c, ctx) {
  const group = el('div', 'tg-actions');
  group.dataset.testid = 'ui-actions';
  group.setAttribute('role', 'group');
  group.setAttribute('aria-label', 'Suggested actions');
  for (const item of asArray(c.items)) {
    if (!isObject(item) || typeof item.module !== 'string' || typeof item.method !== 'string') {
      group.append(unsupported('malformed action'));
      continue;
    }
    const action = {
      label: str(item.label) || `${item.module}.${item.method}`,
      module: item.module,
      method: item.method,
      input: isObject(item.input) ? item.input : {},
    };
    const button = el('button', 'tg-action', action.label);
    button.type = 'button';
    button.dataset.testid = 'ui-action';
    button.dataset.module = action.module;
    button.dataset.method = action.method;
    button.title = `Prepare a project_cli call: ${action.module}.${action.method}`;
    button.addEventListener('click', () => {
      const detail = { ...action, input: structuredCloneSafe(action.input) };
      try { ctx.options.onAction?.(detail); } finally {
        button.dispatchEvent(new CustomEvent('toolgate:action', { bubbles: true, composed: true, detail }));
      }
    });
    group.append(button);
  }
  return group;
}

// ---- datetime_range ------------------------------------------------------------------------

function renderDatetimeRange(c, ctx) {
  const wrap = el('div', 'tg-datetime');
  wrap.dataset.testid = 'ui-datetime';
  if (typeof c.label === 'string' && c.label !== '') {
    wrap.append(el('span', 'tg-datetime-label', c.label));
  }
  const start = str(c.start_at);
  const end = str(c.end_at);
  const zone = typeof c.timezone === 'string' && isValidTimeZone(c.timezone) ? c.timezone : null;
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

function timeEl(iso, text) {
  const t = el('time', 'tg-time', text);
  t.dateTime = iso; // the original ISO string, untouched
  t.title = iso;
  return t;
}

const ISO_OFFSET = /(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * Formats an ISO instant for display: in `zone` when one is given, otherwise at the UTC offset
 * the instant was written with (an event at 10:00+08:00 shows as 10:00, labelled UTC+08:00).
 * Returns null when the string is not a date-time.
 */
function describeInstant(iso, zone, locale) {
  if (!/^\d{4}-\d{2}-\d{2}T/.test(iso)) return null;
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return null;
  const dateOpts = { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric' };
  const timeOpts = { hour: '2-digit', minute: '2-digit' };
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
  if (m[1].toUpperCase() !== 'Z') {
    const sign = m[1][0] === '-' ? -1 : 1;
    const digits = m[1].slice(1).replace(':', '');
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

function offsetLabel(min) {
  if (min === 0) return 'UTC';
  const sign = min < 0 ? '−' : '+';
  const abs = Math.abs(min);
  return `UTC${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

function fmt(locale, opts, ms) {
  try { return new Intl.DateTimeFormat(locale, opts).format(ms); } catch {
    return new Intl.DateTimeFormat(undefined, { ...opts, timeZone: 'UTC' }).format(ms);
  }
}

function zoneName(locale, zone, ms) {
  try {
    const part = new Intl.DateTimeFormat(locale, { timeZone: zone, timeZoneName: 'short' })
      .formatToParts(ms).find((p) => p.type === 'timeZoneName');
    return part ? `${zone} (${part.value})` : zone;
  } catch { return zone; }
}

function isValidTimeZone(zone) {
  try { new Intl.DateTimeFormat('en', { timeZone: zone }); return true; } catch { return false; }
}

// ---- helpers ---------------------------------------------------------------------------------

function unsupported(reason, type) {
  const note = el('p', 'tg-unsupported', `Unsupported component: ${reason}.`);
  note.dataset.testid = 'ui-unsupported';
  note.setAttribute('role', 'note');
  if (type !== undefined) note.dataset.componentType = String(type);
  return note;
}

/** Creates an element; `text` is set with textContent only. */
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function isObject(v) { return typeof v === 'object' && v !== null && !Array.isArray(v); }
function asArray(v) { return Array.isArray(v) ? v : []; }
function str(v) { return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v); }
function clampLevel(n) { return Math.max(2, Math.min(6, Math.trunc(Number(n)) || 3)); }
function structuredCloneSafe(v) { try { return structuredClone(v); } catch { return JSON.parse(JSON.stringify(v)); } }
