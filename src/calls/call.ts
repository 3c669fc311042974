/**
 * One `project_cli` call as the daemon's call path carries it (tool-invoke.ts
 * and the executors): named once by `(user, thread, tool_call_id)`, its args
 * hashed once, its action admitted once — and how its unit of work ended.
 */
import type { ActionDefinition } from '../cli-router/action.js';
import type { CliDocument } from '../cli-router/core.js';
import type { ToolCallArgs } from '../codec/tool-output.js';
import type { MessageRow, Tx } from '../store/store.js';
import { issueClaims } from '../auth/credential-issuer.js';
import type { Session } from '../sessions/sessions.js';
import { insertToolMessage, toolMessageOf, type ToolMessage } from './tool-message.js';

export interface Call {
  userId: string;
  threadId: string;
  toolCallId: string;
  args: ToolCallArgs;
  argsSha256: string;
  /** `limits.max_result_bytes` when the call was admitted (its credential carries it). */
  maxResultBytes?: number | undefined;
}

/** Whom a call runs for: its credential's subject, source and job (a session, or a stored call awaiting approval). */
export type CallPrincipal = Pick<Session, 'userId' | 'source' | 'jobId'>;

/** A call the daemon admitted (core `admitCall`): its action exists and the session may run it. */
export interface AdmittedCall extends Call {
  action: ActionDefinition;
}

/** How a call's unit of work ended. */
export type Outcome =
  /** The call was stored before (a retry, or a concurrent twin that won): answered from the store. */
  | { kind: 'stored'; row: MessageRow }
  /** The id belongs to another call: answered, nothing stored under it. */
  | { kind: 'duplicate'; message: ToolMessage }
  | { kind: 'ran'; row: MessageRow; message: ToolMessage };

/** A credential for exactly this call: this action, bound to its key and its args' hash. */
export function issueFor(session: CallPrincipal, call: Call) {
  return issueClaims({
    userId: session.userId,
    actions: [`${call.args.module}.${call.args.method}`],
    source: session.source,
    jobId: session.jobId,
    call: { thread_id: call.threadId, tool_call_id: call.toolCallId, args_sha256: call.argsSha256 },
    maxResultBytes: call.maxResultBytes,
  });
}

/**
 * Stores the call's tool message built from the document (unless the id
 * belongs to another call). `built`: the message and checked metadata the
 * executor already made of this very document.
 */
export async function storeOutcome(tx: Tx, call: Call, doc: CliDocument, built?: { message: ToolMessage; metadataJson: string }): Promise<Outcome> {
  const message = built?.message ?? toolMessageOf(doc, call.args, call.toolCallId);
  if (doc.ok === false && doc.error.code === 'DUPLICATE_TOOL_CALL_ID') return { kind: 'duplicate', message };
  const row = await insertToolMessage(tx, call, message, built?.metadataJson);
  return { kind: 'ran', row, message };
}
