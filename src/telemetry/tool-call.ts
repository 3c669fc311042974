/**
 * The one hook on the call path: a tool call, whatever transport carried it,
 * is one span named `execute_tool project_cli` (the OpenTelemetry GenAI
 * conventions) and one count and duration in the metrics. Its attributes are
 * the call id, the action (from the action table, else `unknown`), executor,
 * transport and status — never an argument value, a result or a token.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { TOOL_NAME } from '../protocol/limits.js';
import { actionLabel } from './labels.js';
import type { ToolgateMetrics } from './metrics.js';
import { parentContext, tracer } from './spans.js';

export interface ToolCallInfo {
  transport: string;
  executor: string;
  module: unknown;
  method: unknown;
  /** The action's label when the caller has already looked the action up (its admission): not looked up again. */
  action?: string | undefined;
  toolCallId: string;
  /** An incoming W3C `traceparent` (HTTP header or `_meta.traceparent`): the span's parent. */
  traceparent?: string | undefined;
}

export const TOOL_SPAN_NAME = `execute_tool ${TOOL_NAME}`;

/** Runs `work` (the call) inside its span, counting it; a thrown error counts as status `error`. */
export function observeToolCall<T extends { status: string }>(metrics: ToolgateMetrics | undefined, info: ToolCallInfo, work: () => Promise<T>): Promise<T> {
  const action = info.action ?? actionLabel(info.module, info.method);
  const done = metrics?.callStarted({ action, executor: info.executor, transport: info.transport });
  const attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': TOOL_NAME,
    'gen_ai.tool.type': 'function',
    'gen_ai.tool.call.id': info.toolCallId,
    'toolgate.action': action,
    'toolgate.executor': info.executor,
    'toolgate.transport': info.transport,
  };
  return tracer.startActiveSpan(TOOL_SPAN_NAME, { kind: SpanKind.INTERNAL, attributes }, parentContext(info.traceparent), async (span) => {
    try {
      const response = await work();
      span.setAttribute('toolgate.status', response.status);
      if (response.status === 'failure') span.setStatus({ code: SpanStatusCode.ERROR });
      done?.(response.status);
      return response;
    } catch (err) {
      // An end that is no failure (the host asks its user, runtime/peer.ts HostAsked): the span says so, and
      // the call is counted by the request that answers it (the host's retry), so once.
      const toolStatus = (err as { toolStatus?: unknown }).toolStatus;
      if (typeof toolStatus === 'string') {
        span.setAttribute('toolgate.status', toolStatus);
        done?.(null);
        throw err;
      }
      const code = (err as { code?: unknown }).code;
      span.setAttribute('toolgate.status', 'error');
      span.setAttribute('error.type', typeof code === 'string' || typeof code === 'number' ? String(code) : 'internal');
      span.setStatus({ code: SpanStatusCode.ERROR });
      done?.('error');
      throw err;
    } finally {
      span.end();
    }
  });
}
