/**
 * Tracing bootstrap. The daemon's code uses only `@opentelemetry/api`, whose
 * tracer is a no-op until a provider is registered. The SDK and the OTLP
 * exporter are imported here, and only when `OTEL_TRACES_EXPORTER` names an
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
  const [{ NodeTracerProvider, BatchSpanProcessor }, { resourceFromAttributes, detectResources, envDetector }, { OTLPTraceExporter }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  const spanProcessors = [new BatchSpanProcessor(new OTLPTraceExporter())];
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the defaults.
  const resource = resourceFromAttributes({ 'service.name': 'toolgate', 'service.version': version }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors });
  // The AsyncLocalStorage context manager and the W3C trace-context propagator.
  provider.register();
  return { shutdown: () => provider.shutdown() };
}
