/**
 * Tracing bootstrap. The daemon's code uses only `@opentelemetry/api`, whose
 * tracer is a no-op until a provider is registered. The SDK and the OTLP
 * exporter are imported (otel-sdk.ts) only when `OTEL_TRACES_EXPORTER` names an
 * exporter — a daemon without it never loads them.
 *
 * The SDK reads the standard variables itself: `OTEL_EXPORTER_OTLP_ENDPOINT`
 * (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), `OTEL_EXPORTER_OTLP_HEADERS`,
 * `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`, `OTEL_SERVICE_NAME` and
 * `OTEL_RESOURCE_ATTRIBUTES` (the service name defaults to `toolgate`).
 */

/** Flushes the spans not yet exported, then stops the exporter. */
export interface Tracing {
  shutdown(): Promise<void>;
}

/**
 * Exporters this build knows; `none` (or unset) turns tracing off. No `console`: it writes to stdout, which
 * is the protocol stream of `--stdio` and `--mcp`.
 */
const EXPORTERS = new Set(['otlp']);

/** Whether `OTEL_TRACES_EXPORTER` asks for spans at all (`none` or unset: no). */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  const names = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((s) => s.trim()).filter((s) => s && s !== 'none');
  return names.length > 0;
}

/**
 * Registers a tracer provider with the exporter `OTEL_TRACES_EXPORTER` names
 * (`otlp`: OTLP over HTTP, JSON body), or returns null
 * when tracing is off. An exporter name it does not know is an error naming it.
 */
export async function startTracing(env: NodeJS.ProcessEnv, version: string): Promise<Tracing | null> {
  if (!tracingRequested(env)) return null;
  const names = env.OTEL_TRACES_EXPORTER!.split(',').map((s) => s.trim()).filter((s) => s && s !== 'none');
  const unknown = names.find((n) => !EXPORTERS.has(n));
  if (unknown !== undefined) throw new Error(`OTEL_TRACES_EXPORTER: unknown exporter "${unknown}" (use otlp or none)`);
  // A module of its own, imported here, so that the SDK is loaded only now; its imports are static,
  // which a bundler turns into the same named exports Node gives (the daemon's bundle, dist/daemon).
  const { registerTracerProvider } = await import('./otel-sdk.js');
  return registerTracerProvider(version);
}

/**
 * A failed export in one line for the log: its message (and its cause's code, such as `ECONNREFUSED`),
 * never a stack — a collector that is down is an operator's problem, said in words.
 */
export function exportErrorText(err: unknown): string {
  const e = err as { message?: unknown; cause?: { code?: unknown; message?: unknown } } | null | undefined;
  const message = typeof e?.message === 'string' && e.message !== '' ? e.message : String(err);
  const cause = e?.cause?.code ?? e?.cause?.message;
  const text = typeof cause === 'string' && !message.includes(cause) ? `${message} (${cause})` : message;
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}
