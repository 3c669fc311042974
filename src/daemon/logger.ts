/**
 * Structured logs: one JSON object per line on stderr (stdout carries the
 * protocol only). Every string is passed through `redact` first, so a token
 * that slips into a message or error never reaches the log.
 */
import { redact } from '../codec/redact.js';

export { redact };

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
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
