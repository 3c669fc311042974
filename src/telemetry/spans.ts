/**
 * Span helpers over `@opentelemetry/api`. Without a registered provider
 * every call here is the API's no-op: no span is recorded, no context kept.
 * No span attribute ever carries a token, an argument value or a result.
 */
import { ROOT_CONTEXT, SpanStatusCode, context, propagation, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';

export const tracer = trace.getTracer('toolgate');

/** Only a well-formed W3C `traceparent` is handed to the propagator (it checks the rest). */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The context an incoming `traceparent` names, or the current one when there is none (or it is malformed). */
export function parentContext(traceparent: unknown): Context {
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return context.active();
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

/** A `traceparent` from a request's `_meta` (MCP and JSON-RPC params), if any. */
export function metaTraceparent(meta: unknown): string | undefined {
  if (!meta || typeof meta !== 'object') return undefined;
  const value = (meta as Record<string, unknown>).traceparent;
  return typeof value === 'string' ? value : undefined;
}

/** Runs `work` inside a child span of the current one; the span ends with it (an error marks it, without its message). */
export async function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>, parent: Context = context.active()): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, parent, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute('error.type', errorType(err));
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * A child span's `error.type`: a PostgreSQL error's SQLSTATE (pg's errors are all one class, named after the
 * protocol message, `error`), as OpenTelemetry's database conventions ask; else the error's own `name` where
 * it sets one (every error class of ours a span can meet does, as do the MCP SDK's and better-sqlite3's);
 * else its class's name. Never the class's name first: the daemon's bundle keeps no function names
 * (scripts/bundle-daemon.mjs), so a class esbuild renamed (`_CallStopped`, pg's `DatabaseError2`) would
 * show the renamed name.
 */
export function errorType(err: unknown): string {
  if (!(err instanceof Error)) return 'unknown';
  const { code, severity } = err as { code?: unknown; severity?: unknown };
  if (typeof severity === 'string' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  if (err.name !== 'Error' && /^[A-Za-z][A-Za-z0-9]*$/.test(err.name)) return err.name;
  return err.constructor.name;
}

/** The current span's context as environment variables (`TRACEPARENT`, `TRACESTATE`) for a child process. */
export function traceEnv(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  const env: Record<string, string> = {};
  if (carrier.traceparent) env.TRACEPARENT = carrier.traceparent;
  if (carrier.tracestate) env.TRACESTATE = carrier.tracestate;
  return env;
}
