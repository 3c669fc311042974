/**
 * Structured logs: one JSON object per line on stderr (stdout carries the
 * protocol only). Every string is passed through `redact` first, so a token
 * that slips into a message or error never reaches the log.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

/** Anything shaped like a JWS/JWT (three base64url segments, header starting `eyJ`). */
const JWT_SHAPE = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;
const SECRET_KEYS = /^(token|credential|secret|authorization|service_key|password|bearer_secret)$/i;

export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.replace(JWT_SHAPE, '[redacted]');
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return redact(value.stack ?? value.message, depth + 1);
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEYS.test(k) ? '[redacted]' : redact(v, depth + 1);
  return out;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(
  write: (line: string) => void = (l) => process.stderr.write(l),
  minLevel: LogLevel = (process.env.TOOLGATE_LOG_LEVEL as LogLevel | undefined) ?? 'info',
  base: Record<string, unknown> = {},
): Logger {
  const threshold = ORDER[minLevel] ?? ORDER.info;
  return {
    log(level, msg, fields = {}) {
      if (ORDER[level] < threshold) return;
      const entry = redact({ ts: new Date().toISOString(), level, msg, ...base, ...fields });
      write(`${JSON.stringify(entry)}\n`);
    },
    child(fields) {
      return createLogger(write, minLevel, { ...base, ...fields });
    },
  };
}
