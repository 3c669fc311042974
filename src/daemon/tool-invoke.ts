import type { z } from 'zod';
import type { CancellationToken } from 'vscode-jsonrpc';
import { ResponseError } from 'vscode-jsonrpc';
import type { CliDocument } from '../cli-router/run-cli.js';
import { CLI_ENV } from '../cli-router/run-cli.js';
import { lookupAction } from '../cli-router/registry.js';
import type { ToolErrorCode } from '../cli-router/errors.js';
import { argsSha256 } from '../codec/canonical-json.js';
import { scrubCredentials } from '../codec/redact.js';
import {
  buildToolAgentOutput,
  notificationsFor,
  projectText,
  type ToolAgentOutput,
  type ToolCallArgs,
} from '../codec/tool-output.js';
import { deriveUiHints } from '../codec/ui-hints.js';
import { compileStoredUi } from './ui.js';
import { claimThread } from '../store/threads.js';
import { getToolMessage, insertMessage, type MessageRow } from '../store/messages.js';
import { getToolCall } from '../store/tool-calls.js';
import type { ToolInvokeParams } from '../rpc/methods.js';
import { RpcErrorCode, threadNotFound } from '../rpc/errors.js';
import type { Session } from './sessions.js';
import type { Connection, Daemon } from './daemon.js';
import { issueCredential } from './credential-issuer.js';
import type { Logger } from './logger.js';
import type { ToolResponse } from '../protocol/tool.js';

export type { ToolResponse };

type Params = z.infer<typeof ToolInvokeParams>;

/**
 * `tool/invoke`: check the thread and the whitelist, run the action across
 * the CLI boundary under a fresh credential, store the tool message, stream
 * the notifications, answer. A call already stored answers from the store.
 */
export async function invokeTool(
  daemon: Daemon,
  conn: Connection,
  session: Session,
  params: Params,
  token: CancellationToken,
  requestLog: Logger,
): Promise<ToolResponse> {
  const { db } = daemon;
  const { thread_id: threadId, tool_call_id: toolCallId } = params;
  // A credential pasted into the input is refused below, and only this scrubbed copy is ever kept or sent.
  const { value: args, found: offersCredential } = scrubCredentials<ToolCallArgs>(params.args);
  const log = requestLog.child({ thread_id: threadId, tool_call_id: toolCallId, action: `${args.module}.${args.method}` });

  // Cancelled before anything happened: leave no trace, not even a thread.
  if (token.isCancellationRequested) throw new ResponseError(RpcErrorCode.RequestCancelled, 'request cancelled');
  if (!claimThread(db, threadId, session.userId)) throw threadNotFound();

  const stored = getToolMessage(db, threadId, toolCallId);
  if (stored) return replay(daemon, conn, threadId, stored, args);

  const started = performance.now();
  const doc = offersCredential
    ? refuse(args, 'UNAUTHENTICATED', 'credentials are not accepted in the tool input')
    : await runAction(daemon, session, threadId, toolCallId, args, log);
  const output = buildToolAgentOutput(doc, args, toolCallId, deriveUiHints);
  if (doc.ok === false && doc.error.code === 'DUPLICATE_TOOL_CALL_ID') {
    // The id belongs to another call: answer, but store nothing under it.
    return respond(daemon, conn, threadId, output, projectText(output), 'caller');
  }
  const text = projectText(output);
  let row: MessageRow;
  try {
    row = db.transaction(() =>
      insertMessage(db, { threadId, role: 'tool', content: text, metadata: { tool_agent_output: output }, toolCallId, status: output.status }),
    ).immediate();
  } catch (err) {
    // A concurrent call with the same id stored first: answer as it did.
    const winner = getToolMessage(db, threadId, toolCallId);
    if (winner) return replay(daemon, conn, threadId, winner, args);
    throw err;
  }
  log.log('info', 'tool call', { status: output.status, ms: Math.round(performance.now() - started), message_id: row.id });
  daemon.threadListeners.publish(row);
  return respond(daemon, conn, threadId, output, text, 'subscribers');
}

async function runAction(
  daemon: Daemon,
  session: Session,
  threadId: string,
  toolCallId: string,
  args: ToolCallArgs,
  log: Logger,
): Promise<CliDocument> {
  const action = `${args.module}.${args.method}`;
  // Both answers name what this session may call, so the model can correct itself in one step.
  const allowed = { allowed_actions: session.allowedActions };
  if (!lookupAction(args.module, args.method)) return refuse(args, 'UNKNOWN_ACTION', `unknown action ${action}: call one of error.allowed_actions`, allowed);
  if (!session.allowedActions.includes(action)) return refuse(args, 'ACTION_NOT_ALLOWED', `${action} is not allowed for this session: it may call only error.allowed_actions`, allowed);

  const call = { thread_id: threadId, tool_call_id: toolCallId, args_sha256: argsSha256(args) };
  const credential = await issueCredential(daemon.db, daemon.signingKey, {
    userId: session.userId,
    actions: [action],
    source: session.source,
    jobId: session.jobId,
    call,
  });
  const env = {
    [CLI_ENV.credential]: credential,
    [CLI_ENV.verifyKey]: JSON.stringify(daemon.signingKey.publicJwk),
    [CLI_ENV.db]: daemon.dbPath,
  };
  const outcome = await daemon.executor.run(
    { module: args.module, method: args.method, input: args.input, env, timeoutMs: daemon.callTimeoutMs },
    log,
  );
  if (!outcome.doc.ok && (outcome.doc.error.code === 'TIMEOUT' || outcome.doc.error.code === 'INTERNAL')) {
    // The child may have committed just before it was killed: its record wins.
    const recorded = getToolCall(daemon.db, threadId, toolCallId);
    if (recorded && recorded.args_sha256 === call.args_sha256) return JSON.parse(recorded.outcome) as CliDocument;
  }
  return outcome.doc;
}

/** A failure decided by the daemon itself, shaped like project-cli's. */
function refuse(args: ToolCallArgs, code: ToolErrorCode, message: string, extra: Record<string, unknown> = {}): CliDocument {
  return { ok: false, module: args.module, method: args.method, error: { code, message, module: args.module, method: args.method, ...extra } };
}

function replay(daemon: Daemon, conn: Connection, threadId: string, row: MessageRow, args: ToolCallArgs): ToolResponse {
  const output = (JSON.parse(row.metadata) as { tool_agent_output: ToolAgentOutput }).tool_agent_output;
  if (argsSha256(output.tool_call_args) !== argsSha256(args)) {
    const duplicate: ToolAgentOutput = {
      ...output,
      tool_call_args: args,
      status: 'failure',
      result: null,
      ui_hints: null,
      error: {
        code: 'DUPLICATE_TOOL_CALL_ID',
        message: 'this tool_call_id was already used with other arguments',
        module: args.module,
        method: args.method,
      },
    };
    return respond(daemon, conn, threadId, duplicate, projectText(duplicate), 'caller');
  }
  return respond(daemon, conn, threadId, output, row.content, 'caller');
}

/**
 * Sends the notifications (partials, then final) and returns the response,
 * which the transport writes after them. A call that ran reaches the invoking
 * connection and every connection subscribed to the thread, each once; a
 * replayed or refused duplicate reaches the caller only — subscribers saw
 * that call already, and no second event happened.
 */
function respond(
  daemon: Daemon,
  conn: Connection,
  threadId: string,
  output: ToolAgentOutput,
  text: string,
  audience: 'caller' | 'subscribers',
): ToolResponse {
  const targets = new Map<string, Connection>([[conn.id, conn]]);
  if (audience === 'subscribers') for (const c of daemon.subscriptions.connectionsFor(threadId)) targets.set(c.id, c);
  for (const n of notificationsFor(threadId, output, compileStoredUi, deriveUiHints)) {
    for (const target of targets.values()) target.notify('tool/result', n);
  }
  return { tool_call_id: output.tool_call_id, status: output.status, content: [{ type: 'text', text }] };
}
