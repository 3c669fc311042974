/**
 * The demo's output: numbered steps, request/response/notification markers,
 * compact JSON, and a printer that never lets a hidden string (the bearer
 * token) through.
 */
import { isAbsolute, relative } from 'node:path';

export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  req(s: string): string;
  res(s: string): string;
  note(s: string): string;
  ok(s: string): string;
  bad(s: string): string;
}

export function makeStyle(enabled: boolean): Style {
  const wrap = (open: string) => (s: string) => (enabled ? `\x1b[${open}m${s}\x1b[0m` : s);
  return { bold: wrap('1'), dim: wrap('2'), req: wrap('36'), res: wrap('32'), note: wrap('33'), ok: wrap('32'), bad: wrap('31') };
}

export class Printer {
  private secrets: string[] = [];
  readonly width: number;
  readonly style: Style;
  constructor() {
    const tty = process.stdout.isTTY === true;
    this.style = makeStyle(tty && !process.env.NO_COLOR);
    this.width = tty ? Math.max(80, Math.min(160, process.stdout.columns ?? 100)) : 120;
  }
  /** Anything registered here is replaced in every line written, stdout and stderr alike. */
  hide(secret: string): void {
    if (secret) this.secrets.push(secret);
  }
  redact(text: string): string {
    let out = text;
    for (const s of this.secrets) out = out.split(s).join(redacted(s));
    return out;
  }
  line(text = ''): void {
    process.stdout.write(`${this.redact(text)}\n`);
  }
  err(text: string): void {
    process.stderr.write(`${this.redact(text)}\n`);
  }
  /** Pretty JSON, small parts kept on one line, long lines cut at the terminal width, long blocks cut too. */
  json(value: unknown, indent = 5, maxLines = 40): void {
    const lines = prettyJson(value, this.width - indent).split('\n');
    const shown = lines.length > maxLines ? lines.slice(0, maxLines - 1) : lines;
    for (const l of shown) this.line(' '.repeat(indent) + clip(l, this.width - indent));
    if (shown.length < lines.length) this.line(' '.repeat(indent) + this.style.dim(`… (${lines.length - shown.length} more lines)`));
  }
}

export function redacted(token: string): string {
  return `${token.slice(0, 3)}…(redacted, ${token.length} chars)`;
}

export function clip(line: string, width: number): string {
  return line.length <= width ? line : `${line.slice(0, Math.max(10, width - 1))}…`;
}

/** JSON on one line with a space after `:` and `,` (for the compact form). */
export function inlineJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(inlineJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return '{}';
    return `{ ${entries.map(([k, v]) => `${JSON.stringify(k)}: ${inlineJson(v)}`).join(', ')} }`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Indented JSON in which any part that fits the width stays on one line. */
export function prettyJson(value: unknown, width: number, pad = ''): string {
  const flat = inlineJson(value);
  if (pad.length + flat.length <= width || value === null || typeof value !== 'object') return flat;
  const inner = `${pad}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => inner + prettyJson(v, width, inner)).join(',\n')}\n${pad}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return '{}';
  const body = entries.map(([k, v]) => {
    const key = `${JSON.stringify(k)}: `;
    return inner + key + prettyJson(v, width - key.length, inner);
  });
  return `{\n${body.join(',\n')}\n${pad}}`;
}

// ───────────────────────────── wire types (as the contract states them) ─────────────────────────────

/** A path relative to the current directory when it lies inside it, else absolute. */
export function shortPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

/** Waits for the child; nudges it (stdin end, SIGTERM, SIGKILL) if it does not go by itself. */
/** A one-line description of a ui_schema: version, root component type and title, child component types. */
export function summarizeUi(ui: unknown): string {
  if (!ui || typeof ui !== 'object') return '(none)';
  const u = ui as { version?: string; title?: string; component?: Record<string, unknown> };
  const c = u.component ?? {};
  const kids = (Array.isArray(c.children) ? c.children : Array.isArray(c.items) ? c.items : []) as Array<{ type?: string }>;
  const counts = new Map<string, number>();
  for (const k of kids) counts.set(k.type ?? '?', (counts.get(k.type ?? '?') ?? 0) + 1);
  const parts = [...counts].map(([t, n]) => (n > 1 ? `${t}×${n}` : t));
  const title = typeof c.title === 'string' ? c.title : u.title;
  return (
    `v${u.version ?? '?'} ${String(c.type ?? '?')}` +
    (title ? ` "${title}"` : '') +
    (typeof c.subtitle === 'string' ? ` — ${c.subtitle}` : '') +
    (parts.length ? ` [${parts.join(', ')}]` : '')
  );
}
