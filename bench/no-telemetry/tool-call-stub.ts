/** src/telemetry/tool-call.ts without telemetry: the call, nothing around it (bench/no-telemetry/register.ts). */
export const TOOL_SPAN_NAME = 'execute_tool project_cli';

export function observeToolCall<T>(_metrics: unknown, _info: unknown, work: () => Promise<T>): Promise<T> {
  return work();
}
