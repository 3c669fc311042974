/**
 * The call service: the one way a tool call runs, whatever carried it —
 * JSON-RPC `tool/invoke` (src/rpc/dispatcher.ts), MCP `tools/call` on stdio
 * and both HTTP revisions and MCP Tasks (src/mcp/mcp-tool.ts), automation
 * sessions (a `tool/invoke` of a job's session). One `invoke` is one call:
 * its span and metrics (telemetry), then its admission — the whitelist, the
 * secret scan of the input and the action lookup, once —, quotas, approval,
 * the executor, the stored tool message and the notifications
 * (tool-invoke.ts `answerToolCall`). Built once by `serve` with the narrow
 * deps it declares.
 */
import type { ToolCallArgs } from '../protocol/tool.js';
import { admitCall } from '../cli-router/core.js';
import { observeToolCall } from '../telemetry/tool-call.js';
import { actionLabel } from '../telemetry/labels.js';
import type { ToolgateMetrics } from '../telemetry/metrics.js';
import type { Logger } from '../runtime/logger.js';
import type { Peer } from '../runtime/peer.js';
import type { Session } from '../sessions/sessions.js';
import { answerToolCall, type ToolCallAnswer, type ToolInvokeDeps } from './tool-invoke.js';

export interface ToolCallsDeps extends ToolInvokeDeps {
  /** Read on every call: metrics are attached once the daemon is built. */
  metrics?: ToolgateMetrics | undefined;
}

/** A call as its carrier names it: the model's `args`, and the host's ids. */
export interface CallRequest {
  threadId: string;
  toolCallId: string;
  args: ToolCallArgs;
  /** An incoming W3C `traceparent` (HTTP header or `_meta.traceparent`): the call's span's parent. */
  traceparent?: string | undefined;
  /**
   * The carrier's one walk of the request (src/codec/screen.ts) found no
   * token, configured secret, credential field or malformed string anywhere
   * in `args`: admission does not walk them again.
   */
  screened?: boolean | undefined;
}

export interface InvokeOptions {
  /** Aborted: the call is cancelled — before it starts, nothing of it stays; once it runs, it is stopped (contract §16). */
  signal: AbortSignal;
  /** Who hears the call's `tool/result` (and `tool/approval`) notifications: the carrier's connection. */
  to: Peer & { transport: string };
  log: Logger;
}

export class ToolCalls {
  constructor(private readonly deps: ToolCallsDeps) {}

  /**
   * Runs one call for `principal` and answers it — as run, as stored before
   * (same id and args), or refused — with the projection object its text is
   * the JSON of. Tool-level failures are answers; a DaemonError is thrown only
   * for the envelope (a call cancelled before it started, a thread of another
   * user's…), for the carrier to put on its wire.
   */
  invoke(principal: Session, call: CallRequest, opts: InvokeOptions): Promise<ToolCallAnswer & { status: string }> {
    const { deps } = this;
    // The call's one admission (the secret scan of the input, the action lookup, the whitelist): its
    // action names the call's metrics and span too; only a refused call's label is looked up again.
    const admission = admitCall(principal.allowedActions, call.args, deps.secrets, call.screened);
    const { module, method } = call.args;
    const action = admission.admitted ? admission.name : actionLabel(module, method);
    const info = { transport: opts.to.transport, executor: deps.executor.kind, module, method, action, toolCallId: call.toolCallId, traceparent: call.traceparent };
    return observeToolCall(deps.metrics, info, async () => {
      const params = { session_id: principal.id, thread_id: call.threadId, tool_call_id: call.toolCallId, args: call.args };
      const answer = await answerToolCall(deps, opts.to, principal, params, admission, opts.signal, opts.log);
      return { ...answer, status: answer.response.status };
    });
  }
}
