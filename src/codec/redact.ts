/**
 * Redaction for anything written to a log: JWT/JWS-shaped strings (a
 * base64url JSON header — `{` encodes to `ey…`/`ew…` — then two more
 * segments) and values under secret-sounding keys. Pure; shared by the
 * daemon's logger and project-cli's own stderr line.
 */
// Anchored at a token boundary so that scanning is linear even on hostile input (no re-scan from every offset).
const JWT_SHAPE = /(?<![A-Za-z0-9_-])e[wy][A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*/g;
/** Log fields are for people: a longer string is cut (after redaction, so no token half survives). */
const MAX_STRING = 4096;
const SECRET_KEYS = /^(token|credential|secret|authorization|service_key|password|bearer_secret)$/i;
const MAX_DEPTH = 8;

export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    const clean = value.replace(JWT_SHAPE, '[redacted]');
    return clean.length > MAX_STRING ? `${clean.slice(0, MAX_STRING)}…[${clean.length - MAX_STRING} more chars]` : clean;
  }
  if (value === null || typeof value !== 'object') return value;
  // Deeper than any log field we write: drop rather than write unredacted.
  if (depth > MAX_DEPTH) return '[truncated]';
  if (value instanceof Error) return redact(value.stack ?? value.message, depth + 1);
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEYS.test(k) ? '[redacted]' : redact(v, depth + 1);
  return out;
}

/** Input fields that would carry a credential: never accepted, never stored. */
export const CREDENTIAL_FIELDS: ReadonlySet<string> = new Set([
  'credential',
  'token',
  'bearer',
  'access_token',
  'api_key',
  'jwt',
  'project_cli_credential',
]);

/**
 * A copy of a tool input with every credential removed — values under a
 * credential field (at any depth) and JWT-shaped strings — and whether any
 * was found. The daemon refuses such a call and keeps only the scrubbed copy,
 * so a token the model pasted reaches no notification, row or log.
 */
export function scrubCredentials<T>(value: T): { value: T; found: boolean } {
  let found = false;
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') {
      const clean = v.replace(JWT_SHAPE, '[redacted]');
      if (clean !== v) found = true;
      return clean;
    }
    if (v === null || typeof v !== 'object' || depth > 100) return v;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (CREDENTIAL_FIELDS.has(k.toLowerCase())) {
        found = true;
        out[k] = '[redacted]';
      } else out[k] = walk(x, depth + 1);
    }
    return out;
  };
  const scrubbed = walk(value, 0) as T;
  return { value: found ? scrubbed : value, found };
}
