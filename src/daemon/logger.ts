/**
 * Structured logs: one JSON object per line on stderr (stdout carries the
 * protocol only). Every string is passed through `redact` first, so a token
 * that slips into a message or error never reaches the log.
 *
 * Logging sits on the hot path (a child logger per request, a line per call),
 * so a level that is off costs one comparison: `child()` only remembers its
 * fields, and nothing is merged, redacted, stringified or written until a line
 * is actually logged. `TOOLGATE_LOG_LEVEL` (debug | info | warn | error,
 * default info) sets the level.
 */
import { redact } from '../codec/redact.js';

export { redact };

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
  /** Whether a line at this level would be written: guard fields that cost something to build. */
  enabled(level: LogLevel): boolean;
  child(fields: Record<string, unknown>): Logger;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(
  write: (line: string) => void = stderrLines(),
  minLevel: LogLevel = (process.env.TOOLGATE_LOG_LEVEL as LogLevel | undefined) ?? 'info',
  base: Record<string, unknown> = {},
): Logger {
  const threshold = ORDER[minLevel] ?? ORDER.info;
  return chained(write, threshold, [base]);
}

/** A logger whose context is a chain of field objects, merged only when a line is written. */
function chained(write: (line: string) => void, threshold: number, chain: readonly Record<string, unknown>[]): Logger {
  return {
    log(level, msg, fields) {
      if (!(ORDER[level] >= threshold)) return;
      const entry: Record<string, unknown> = { ts: new Date().toISOString(), level, msg };
      for (const f of chain) Object.assign(entry, f);
      if (fields) Object.assign(entry, fields);
      write(`${JSON.stringify(redact(entry))}\n`);
    },
    enabled: (level) => ORDER[level] >= threshold,
    child: (fields) => chained(write, threshold, [...chain, fields]),
  };
}

/**
 * stderr, one write per turn of the event loop: the lines logged by calls
 * that finish together (a line each) cost one system call instead of one
 * each. Whatever is pending is written synchronously at exit, so a line
 * logged just before the process ends is not lost.
 */
export function stderrLines(stream: NodeJS.WritableStream = process.stderr): (line: string) => void {
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.length === 1 ? pending[0]! : pending.join('');
    pending = [];
    stream.write(text);
  };
  process.once('exit', flush);
  return (line) => {
    pending.push(line);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush).unref();
    }
  };
}
