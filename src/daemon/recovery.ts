import type { CliDocument } from '../cli-router/run-cli.js';
import { buildToolAgentOutput, projectText, type ToolCallArgs } from '../codec/tool-output.js';
import { deriveUiHints } from '../codec/ui-hints.js';
import { insertMessage } from '../store/messages.js';
import { toolCallsWithoutMessage } from '../store/tool-calls.js';
import type { Db } from '../store/database.js';
import type { Logger } from './logger.js';

/**
 * Turns every call whose effect committed (project-cli's record) but whose
 * tool message was never stored — the daemon died in between — into its
 * tool message, exactly as the live path would have. Runs before serving.
 */
export function recoverToolCalls(db: Db, log: Logger): number {
  const pending = toolCallsWithoutMessage(db);
  for (const call of pending) {
    const args = JSON.parse(call.args) as ToolCallArgs;
    const doc = JSON.parse(call.outcome) as CliDocument;
    const output = buildToolAgentOutput(doc, args, call.tool_call_id, deriveUiHints);
    db.transaction(() => {
      insertMessage(db, {
        threadId: call.thread_id,
        role: 'tool',
        content: projectText(output),
        metadata: { tool_agent_output: output },
        toolCallId: call.tool_call_id,
        status: output.status,
      });
    }).immediate();
    log.log('warn', 'recovered a tool call without its message', { thread_id: call.thread_id, tool_call_id: call.tool_call_id });
  }
  return pending.length;
}
