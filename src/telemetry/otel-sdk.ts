/**
 * The OpenTelemetry SDK, registered: a tracer provider with the OTLP/HTTP
 * exporter, the AsyncLocalStorage context manager and the W3C trace-context
 * propagator. Imported by tracing.ts only when `OTEL_TRACES_EXPORTER` asks for
 * spans; the SDK reads the standard `OTEL_*` variables itself.
 */
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { Tracing } from './tracing.js';

export function registerTracerProvider(version: string): Tracing {
  const spanProcessors = [new BatchSpanProcessor(new OTLPTraceExporter())];
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the defaults.
  const resource = resourceFromAttributes({ 'service.name': 'toolgate', 'service.version': version }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors });
  provider.register();
  return { shutdown: () => provider.shutdown() };
}
