/**
 * The OpenTelemetry SDK, registered: a tracer provider with the exporter
 * `OTEL_TRACES_EXPORTER` names, the AsyncLocalStorage context manager and the
 * W3C trace-context propagator. Imported by tracing.ts only when
 * `OTEL_TRACES_EXPORTER` asks for spans; the SDK reads the standard `OTEL_*`
 * variables itself.
 */
import { BatchSpanProcessor, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { ExportFailures, Tracing, TraceExporterName } from './tracing.js';

type ExportCallback = Parameters<SpanExporter['export']>[1];
/** `ExportResultCode.SUCCESS` of @opentelemetry/core (not a dependency of its own). */
const SUCCESS = 0;

/**
 * The OTLP exporter, reporting failures: the SDK only hands them to its
 * diagnostic logger, which nobody registers, so a collector that is down
 * dropped every span in silence. The first failure of an outage is reported
 * (one warning line); a success ends the outage.
 */
class ReportingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly failures: ExportFailures,
  ) {}

  export(spans: ReadableSpan[], done: ExportCallback): void {
    this.inner.export(spans, (result) => {
      if (result.code === SUCCESS) this.failures.succeeded();
      else this.failures.failed(result.error ?? new Error('the export failed'));
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * `OTEL_TRACES_EXPORTER=console`: each span as one JSON line on stderr, as it
 * ends — never on stdout, the protocol stream of `--stdio` and `--mcp`.
 */
class StderrSpanExporter implements SpanExporter {
  export(spans: ReadableSpan[], done: ExportCallback): void {
    for (const s of spans) {
      const ctx = s.spanContext();
      const [sec, ns] = s.duration;
      const line = {
        span: s.name,
        trace_id: ctx.traceId,
        span_id: ctx.spanId,
        parent_span_id: s.parentSpanContext?.spanId,
        kind: s.kind,
        duration_ms: Math.round((sec * 1e3 + ns / 1e6) * 1000) / 1000,
        status: s.status.code,
        attributes: s.attributes,
      };
      process.stderr.write(`${JSON.stringify(line)}\n`);
    }
    done({ code: SUCCESS });
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export function registerTracerProvider(version: string, exporters: readonly TraceExporterName[], failures: ExportFailures): Tracing {
  const spanProcessors: SpanProcessor[] = exporters.map((name) =>
    name === 'console' ? new SimpleSpanProcessor(new StderrSpanExporter()) : new BatchSpanProcessor(new ReportingExporter(new OTLPTraceExporter(), failures)),
  );
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the defaults.
  const resource = resourceFromAttributes({ 'service.name': 'toolgate', 'service.version': version }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors });
  provider.register();
  // A flush that fails at shutdown was reported by the exporter already (one line): not again here.
  return { shutdown: () => provider.shutdown().catch((err: unknown) => (failures.reported() ? undefined : Promise.reject(err))) };
}
