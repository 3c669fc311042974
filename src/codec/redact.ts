/**
 * Redaction for anything written to a log: JWT/JWS-shaped strings (a
 * base64url JSON header — `{` encodes to `ey…`/`ew…` — then two more
 * segments) and values under secret-sounding keys. Pure; shared by the
 * daemon's logger and project-cli's own stderr line.
 */
const JWT_SHAPE = /e[wy][A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*/g;
const SECRET_KEYS = /^(token|credential|secret|authorization|service_key|password|bearer_secret)$/i;
const MAX_DEPTH = 8;

export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.replace(JWT_SHAPE, '[redacted]');
  if (value === null || typeof value !== 'object') return value;
  // Deeper than any log field we write: drop rather than write unredacted.
  if (depth > MAX_DEPTH) return '[truncated]';
  if (value instanceof Error) return redact(value.stack ?? value.message, depth + 1);
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEYS.test(k) ? '[redacted]' : redact(v, depth + 1);
  return out;
}
