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
import { isoOfMs } from '../store/iso-time.js';

export { redact };

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
  /** Whether a line at this level would be written: guard fields that cost something to build. */
  enabled(level: LogLevel): boolean;
  child(fields: Record<string, unknown>): Logger;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** The process's root logger: it and every child also mask the configured secrets it is told of. */
export interface RootLogger extends Logger {
  /** The configured secrets (bearer secret, service key, …), known once the config is read: masked verbatim in every line. */
  maskSecrets(secrets: readonly string[]): void;
}

export function createLogger(
  write: (line: string) => void = stderrLines(),
  minLevel: LogLevel = (process.env.TOOLGATE_LOG_LEVEL as LogLevel | undefined) ?? 'info',
  base: Record<string, unknown> = {},
): RootLogger {
  const threshold = ORDER[minLevel] ?? ORDER.info;
  // A warning or an error leaves at once: a signal that kills the process without an 'exit'
  // event (SIGHUP, SIGQUIT) must not take the line that explains it along.
  const flush = (write as { flush?: () => void }).flush;
  const masked: { secrets: readonly string[] } = { secrets: [] };
  const root = chained(flush ? (line, level) => { write(line); if (ORDER[level] >= ORDER.warn) flush(); } : write, threshold, [base], masked);
  return { ...root, maskSecrets: (secrets) => (masked.secrets = secrets) };
}

/** A logger whose context is a chain of field objects, merged only when a line is written. */
function chained(
  write: (line: string, level: LogLevel) => void,
  threshold: number,
  chain: readonly Record<string, unknown>[],
  masked: { secrets: readonly string[] },
): Logger {
  return {
    log(level, msg, fields) {
      if (!(ORDER[level] >= threshold)) return;
      const entry: Record<string, unknown> = { ts: isoOfMs(Date.now()), level, msg };
      for (const f of chain) Object.assign(entry, f);
      if (fields) Object.assign(entry, fields);
      write(`${JSON.stringify(redact(entry, 0, masked.secrets))}\n`, level);
    },
    enabled: (level) => ORDER[level] >= threshold,
    child: (fields) => chained(write, threshold, [...chain, fields], masked),
  };
}

/** How long a logged line may wait for others before it is written. */
const LOG_FLUSH_MS = 25;
/** Pending text past which the lines are written at the next turn instead. */
const LOG_FLUSH_BYTES = 32 * 1024;

/**
 * stderr, one write per short window: a write to a pipe costs a system call
 * and a wake-up of the reader (measured ~0.3 ms a line on the bench machine,
 * as much as the call's own response), so the lines of the calls that finish
 * within LOG_FLUSH_MS of each other leave in one write. Whatever is pending
 * is written synchronously at exit, so a line logged just before the process
 * ends is not lost.
 */
export function stderrLines(
  stream: NodeJS.WritableStream = process.stderr,
  windowMs = LOG_FLUSH_MS,
): ((line: string) => void) & { flush: () => void } {
  let pending: string[] = [];
  let bytes = 0;
  let timer: NodeJS.Timeout | undefined;
  let soon = false;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    soon = false;
    if (pending.length === 0) return;
    const text = pending.length === 1 ? pending[0]! : pending.join('');
    pending = [];
    bytes = 0;
    stream.write(text);
  };
  process.once('exit', flush);
  const write = (line: string) => {
    pending.push(line);
    bytes += line.length;
    if (bytes >= LOG_FLUSH_BYTES) {
      if (!soon) {
        soon = true;
        setImmediate(flush).unref();
      }
    } else if (!timer) {
      timer = setTimeout(flush, windowMs);
      timer.unref();
    }
  };
  return Object.assign(write, { flush });
}
