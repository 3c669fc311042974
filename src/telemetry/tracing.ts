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

/** Exporters this build knows; `none` (or unset) turns tracing off. */
const EXPORTERS = ['otlp', 'console'] as const;
export type TraceExporterName = (typeof EXPORTERS)[number];

/** Whether `OTEL_TRACES_EXPORTER` asks for spans at all (`none` or unset: no). */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  return exporterNames(env).length > 0;
}

function exporterNames(env: NodeJS.ProcessEnv): string[] {
  return (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((s) => s.trim()).filter((s) => s && s !== 'none');
}

/**
 * Where the OTLP exporter sends spans, as the SDK decides it from the
 * standard variables, for the `tracing on` line: the traces endpoint as
 * given, else the base endpoint + `/v1/traces`, else the SDK's default.
 * Credentials in the URL are not shown.
 */
export function otlpTracesEndpoint(env: NodeJS.ProcessEnv): string {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const url = traces || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : 'http://localhost:4318/v1/traces');
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url.replace(/\/\/[^/@]*@/, '//');
  }
}

/**
 * Failed exports, said once per outage: the first failure is one warning
 * line naming the endpoint and the cause (never a stack); further failures
 * are quiet until an export succeeds again.
 */
export class ExportFailures {
  private failing = false;
  private warned = false;

  constructor(private readonly warn: (err: string) => void) {}

  failed(err: unknown): void {
    if (this.failing) return;
    this.failing = true;
    this.warned = true;
    this.warn(exportErrorText(err));
  }

  succeeded(): void {
    this.failing = false;
  }

  /** Whether a failure was said already (the shutdown's flush then says nothing more). */
  reported(): boolean {
    return this.warned;
  }
}

/**
 * Registers a tracer provider with the exporters `OTEL_TRACES_EXPORTER`
 * names (`otlp`: OTLP over HTTP; `console`: one JSON line per span on
 * stderr), or returns null when tracing is off. An exporter name it does
 * not know is an error naming it. `warn` says an unreachable collector.
 */
export async function startTracing(env: NodeJS.ProcessEnv, version: string, warn: (err: string) => void = () => {}): Promise<(Tracing & { exporters: TraceExporterName[] }) | null> {
  if (!tracingRequested(env)) return null;
  const names = exporterNames(env);
  const unknown = names.find((n) => !(EXPORTERS as readonly string[]).includes(n));
  if (unknown !== undefined) throw new Error(`OTEL_TRACES_EXPORTER: unknown exporter "${unknown}" (use otlp, console or none)`);
  const exporters = [...new Set(names)] as TraceExporterName[];
  // A module of its own, imported here, so that the SDK is loaded only now; its imports are static,
  // which a bundler turns into the same named exports Node gives (the daemon's bundle, dist/daemon).
  const { registerTracerProvider } = await import('./otel-sdk.js');
  return { ...registerTracerProvider(version, exporters, new ExportFailures(warn)), exporters };
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
