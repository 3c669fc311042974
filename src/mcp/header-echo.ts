/**
 * An error answer on `/mcp` never carries back what the client sent in a
 * header (contract section 21). The MCP SDK's transports name the offending
 * value in their 400s — `Unsupported protocol version: <MCP-Protocol-Version>`,
 * `Mcp-Name`, `Mcp-Param-*` mismatches — so a token pasted into the wrong
 * header came back in the body. Rather than follow each message of each SDK
 * release, every error response of `/mcp` (status 400 and above) is held,
 * and every request-header value found in one of its JSON strings is
 * replaced by `[header value]`; the message keeps its words and its
 * structure. Success answers and SSE streams pass untouched.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Headers whose values are the request's own framing or media types, not something a client makes up. */
const FRAMING = new Set(['accept', 'accept-encoding', 'connection', 'content-length', 'content-type', 'host', 'transfer-encoding']);
/** Shorter values are left alone: they cannot hold a secret, and would match ordinary words. */
const MIN_LENGTH = 4;
const REPLACEMENT = '[header value]';

/** The header values of `req` that must not come back in an error answer, longest first. */
function echoableValues(req: IncomingMessage): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(req.headers)) {
    if (FRAMING.has(name) || value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) {
      const trimmed = v.trim();
      if (trimmed.length >= MIN_LENGTH) values.add(trimmed);
      // Each word too: `Bearer <token>` may come back as the token alone.
      for (const word of trimmed.split(/[\s,;]+/)) if (word.length >= 8) values.add(word);
    }
  }
  return [...values].sort((a, b) => b.length - a.length);
}

/** `body` with every echoable value inside its JSON strings replaced; a body that is not JSON is replaced whole. */
function scrubBody(body: string, values: readonly string[]): string {
  const scrub = (text: string) => values.reduce((t, v) => (t.includes(v) ? t.split(v).join(REPLACEMENT) : t), text);
  try {
    return JSON.stringify(JSON.parse(body, (_key, value: unknown) => (typeof value === 'string' ? scrub(value) : value)));
  } catch {
    return values.some((v) => body.includes(v)) ? 'request refused' : body;
  }
}

/**
 * Makes every error answer written to `res` from here on free of `req`'s
 * header values. Must be called before anything is written; costs nothing
 * when the request has no header worth scrubbing.
 */
export function withoutHeaderEchoes(req: IncomingMessage, res: ServerResponse): void {
  const values = echoableValues(req);
  if (values.length === 0) return;
  let held: Buffer[] | null = null;
  const hold = (statusCode: number) => {
    if (held !== null || res.headersSent || statusCode < 400) return;
    held = [];
    // The body may change length: let Node frame it.
    res.removeHeader('content-length');
  };
  const asBuffer = (chunk: unknown) => (typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array));

  const writeHead = res.writeHead.bind(res);
  res.writeHead = ((statusCode: number, ...rest: unknown[]) => {
    hold(statusCode);
    if (held !== null) {
      for (const arg of rest) {
        if (arg === null || typeof arg !== 'object' || Array.isArray(arg)) continue;
        for (const key of Object.keys(arg)) if (key.toLowerCase() === 'content-length') delete (arg as Record<string, unknown>)[key];
      }
    }
    return (writeHead as (...args: unknown[]) => ServerResponse)(statusCode, ...rest);
  }) as ServerResponse['writeHead'];

  const write = res.write.bind(res);
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    hold(res.statusCode);
    if (held === null) return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
    held.push(asBuffer(chunk));
    const done = rest.find((a) => typeof a === 'function') as (() => void) | undefined;
    if (done) queueMicrotask(done);
    return true;
  }) as ServerResponse['write'];

  const end = res.end.bind(res);
  res.end = ((...args: unknown[]) => {
    hold(res.statusCode);
    if (held === null) return (end as (...a: unknown[]) => ServerResponse)(...args);
    const [chunk] = args;
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') held.push(asBuffer(chunk));
    const body = scrubBody(Buffer.concat(held).toString('utf8'), values);
    held = null;
    const done = args.find((a) => typeof a === 'function');
    return done ? end(body, done as () => void) : end(body);
  }) as ServerResponse['end'];
}
