import type { z } from 'zod';
import type { CancellationToken } from 'vscode-jsonrpc';
import type { CliDocument } from '../cli-router/core.js';
import { failure as cliFailure, runCore } from '../cli-router/core.js';
import { CLI_ENV } from '../cli-router/run-cli.js';
import { lookupAction } from '../cli-router/registry.js';
import type { ToolErrorCode } from '../cli-router/errors.js';
import { CredentialError, checkClaims } from '../cli-router/credential.js';
import { argsSha256 } from '../codec/canonical-json.js';
import { offersCredential, scrubCredentials } from '../codec/redact.js';
import {
  buildToolAgentOutput,
  notificationsFor,
  projectText,
  type ToolAgentOutput,
  type ToolCallArgs,
} from '../codec/tool-output.js';
import { deriveUiHints } from '../codec/ui-hints.js';
import { compileStoredUi } from './ui.js';
import { DATABASE_UNAVAILABLE_MESSAGE, StoreConflictError, StoreUnavailableError, type MessageRow, type Tx } from '../store/store.js';
import { checkCallRecord, toolMessageMetadata } from '../store/stored-rows.js';
import type { ToolInvokeParams } from '../protocol/methods.js';
import { DaemonError } from './errors.js';
import type { Session } from './sessions.js';
import type { Daemon } from './daemon.js';
import type { Peer } from './peer.js';
import { issueClaims, signCredential } from './credential-issuer.js';
import type { Logger } from './logger.js';
import type { ToolResponse } from '../protocol/tool.js';

export type { ToolResponse };

type Params = z.infer<typeof ToolInvokeParams>;

/** One call, named once: `(user, thread, tool_call_id)` and its args, hashed once. */
interface Call {
  userId: string;
  threadId: string;
  toolCallId: string;
  args: ToolCallArgs;
  argsSha256: string;
}

/** How a call's unit of work ended. */
type Outcome =
  | { kind: 'stored'; row: MessageRow }
  | { kind: 'duplicate'; output: ToolAgentOutput }
  | { kind: 'ran'; row: MessageRow; output: ToolAgentOutput };

/**
 * `tool/invoke`: check the whitelist, run the action across the CLI boundary
 * under a fresh credential, store the tool message, and — only once the
 * commit holding the call's writes is durable — stream the notifications and
 * answer. A call already stored answers from the store.
 *
 * In-process, everything the call writes (credential audit, the action, the
 * call record, the tool message, the thread) is one unit of work. With a
 * child process no transaction is held while it runs: the audit commits
 * before the credential is handed out, the child commits the action and its
 * record through its own connection, then the tool message commits.
 */
export async function invokeTool(
  daemon: Daemon,
  conn: Peer,
  session: Session,
  params: Params,
  token: CancellationToken,
  requestLog: Logger,
): Promise<ToolResponse> {
  // A credential or token anywhere in the args is refused below; only a masked copy is ever sent, and nothing is kept.
  const refused = offersCredential(params.args, daemon.secrets);
  const args = refused ? scrubCredentials<ToolCallArgs>(params.args, daemon.secrets) : params.args;
  const call: Call = {
    userId: session.userId,
    threadId: params.thread_id,
    toolCallId: params.tool_call_id,
    args,
    argsSha256: argsSha256(args),
  };
  const log = requestLog.child({ thread_id: call.threadId, tool_call_id: call.toolCallId, action: `${args.module}.${args.method}` });

  // Cancelled before anything happened: leave no trace, not even a thread.
  if (token.isCancellationRequested) throw new DaemonError('CANCELLED', 'request cancelled');
  if (refused) {
    // Contract section 5: refused, never stored — no thread, no message; only the caller hears of it.
    const output = buildToolAgentOutput(
      refuse(args, 'UNAUTHENTICATED', 'the tool input carries a bearer token or credential; it is accepted only by the daemon, never in the input'),
      args, call.toolCallId, deriveUiHints,
    );
    return respond(daemon, conn, call, output, projectText(output), 'caller');
  }

  const refusal = checkWhitelist(session, args);

  const started = performance.now();
  const run = () =>
    refusal || daemon.executor.kind === 'inprocess'
      ? daemon.store.transaction((tx) => runInProcess(daemon, session, call, refusal, tx))
      : runHeld(daemon, call, () => runInChild(daemon, session, call, log));
  let outcome: Outcome;
  try {
    try {
      outcome = await run();
    } catch (err) {
      if (!(err instanceof StoreConflictError)) throw err;
      // A concurrent call with the same id (another process) stored first: answer as it did. If it has
      // recorded the action but not stored its message yet, run again: the core answers from that record.
      const winner = await daemon.store.read((tx) => tx.messages.getToolMessage(call.userId, call.threadId, call.toolCallId));
      outcome = winner ? { kind: 'stored', row: winner } : await run();
    }
  } catch (err) {
    if (!(err instanceof StoreUnavailableError)) throw err;
    // The database went away mid-call: answered, never stored; the same tool_call_id is safe to retry.
    log.log('warn', 'tool call failed: database unavailable', { error: err.message });
    const output = buildToolAgentOutput(refuse(args, 'INTERNAL', DATABASE_UNAVAILABLE_MESSAGE), args, call.toolCallId, deriveUiHints);
    return respond(daemon, conn, call, output, projectText(output), 'caller');
  }
  const ms = performance.now() - started;
  if (daemon.executor.kind === 'inprocess' && ms > daemon.callTimeoutMs) {
    log.log('warn', 'in-process call exceeded the call timeout', { ms: Math.round(ms), timeout_ms: daemon.callTimeoutMs });
  }

  switch (outcome.kind) {
    case 'stored':
      return replay(daemon, conn, call, outcome.row);
    case 'duplicate':
      // The id belongs to another call: answer, but store nothing under it.
      return respond(daemon, conn, call, outcome.output, projectText(outcome.output), 'caller');
    case 'ran': {
      log.log('info', 'tool call', { status: outcome.output.status, ms: Math.round(ms), message_id: outcome.row.id });
      // Subscribers and AG-UI streams of the thread learn of the call from the bus (in thread order); the caller, below —
      // unless its own subscription already sent it the store's copy (this publish came after the bus filled a gap).
      daemon.threadEvents.publish({ userId: call.userId, threadId: call.threadId, row: outcome.row, origin: conn.id });
      const heard = daemon.subscriptions.sentTo(conn.id, outcome.row.id);
      return respond(daemon, conn, call, outcome.output, outcome.row.content, heard ? 'heard' : 'caller', outcome.row.id);
    }
  }
}

/**
 * A call finished across two commits (the child's, then the tool message) is
 * marked as this daemon's while it runs, where the engine is shared by other
 * daemons: their recovery at start must not write its tool message.
 */
async function runHeld<T>(daemon: Daemon, call: Call, work: () => Promise<T>): Promise<T> {
  const release = await daemon.store.holdCall?.(call.userId, call.threadId, call.toolCallId);
  try {
    return await work();
  } finally {
    await release?.();
  }
}

/** The session's whitelist, checked by the daemon before any credential is issued. */
function checkWhitelist(session: Session, args: ToolCallArgs): CliDocument | null {
  const action = `${args.module}.${args.method}`;
  // Both answers name what this session may call, so the model can correct itself in one step.
  const allowed = { allowed_actions: session.allowedActions };
  if (!lookupAction(args.module, args.method)) return refuse(args, 'UNKNOWN_ACTION', `unknown action ${action}: call one of error.allowed_actions`, allowed);
  if (!session.allowedActions.includes(action)) return refuse(args, 'ACTION_NOT_ALLOWED', `${action} is not allowed for this session: it may call only error.allowed_actions`, allowed);
  return null;
}

function issueFor(session: Session, call: Call) {
  return issueClaims({
    userId: session.userId,
    actions: [`${call.args.module}.${call.args.method}`],
    source: session.source,
    jobId: session.jobId,
    call: { thread_id: call.threadId, tool_call_id: call.toolCallId, args_sha256: call.argsSha256 },
  });
}

/**
 * The whole call as one unit of work on the daemon's connection: the stored
 * answer if there is one; else the credential (claims handed to the core as
 * an object, through the same claim checks as a token), its audit row, the
 * action and its record (the CLI core), and the tool message.
 */
async function runInProcess(daemon: Daemon, session: Session, call: Call, refusal: CliDocument | null, tx: Tx): Promise<Outcome> {
  const stored = await tx.messages.getToolMessage(call.userId, call.threadId, call.toolCallId);
  if (stored) return { kind: 'stored', row: stored };
  let doc = refusal;
  if (!doc) {
    const issued = issueFor(session, call);
    await tx.credentialAudit.record(issued.audit);
    const { module, method, input } = call.args;
    try {
      const claims = checkClaims(issued.claims);
      doc = (await runCore(tx, { claims, module, method, input, argsSha256: call.argsSha256, checkRecord: checkCallRecord })).doc;
    } catch (err) {
      if (!(err instanceof CredentialError)) throw err;
      doc = cliFailure(module, method, 'UNAUTHENTICATED', err.message).doc;
    }
  }
  return storeOutcome(tx, call, doc);
}

/**
 * The call across the process boundary. No transaction is open while the
 * child runs (it writes through its own connection): the audit row commits
 * first, the child commits the action with its record, then the message.
 */
async function runInChild(daemon: Daemon, session: Session, call: Call, log: Logger): Promise<Outcome> {
  if (daemon.executor.kind !== 'subprocess') throw new Error('no subprocess executor');
  const stored = await daemon.store.read((tx) => tx.messages.getToolMessage(call.userId, call.threadId, call.toolCallId));
  if (stored) return { kind: 'stored', row: stored };

  const issued = issueFor(session, call);
  const credential = await signCredential(issued.claims, daemon.signingKey);
  await daemon.store.transaction((tx) => tx.credentialAudit.record(issued.audit));
  const env = {
    [CLI_ENV.credential]: credential,
    [CLI_ENV.verifyKey]: JSON.stringify(daemon.signingKey.publicJwk),
    [CLI_ENV.db]: daemon.dbPath,
  };
  const { module, method, input } = call.args;
  const outcome = await daemon.executor.run({ module, method, input, env, timeoutMs: daemon.callTimeoutMs }, log);
  let doc = outcome.doc;
  if (!doc.ok && (doc.error.code === 'TIMEOUT' || doc.error.code === 'INTERNAL')) {
    // The child may have committed just before it was killed: its record wins.
    const recorded = await daemon.store.read((tx) => tx.toolCalls.get(call.userId, call.threadId, call.toolCallId));
    if (recorded && recorded.args_sha256 === call.argsSha256) doc = JSON.parse(recorded.outcome) as CliDocument;
    // The child met the outage and recorded nothing: no effect to store, and a retry runs the call.
    else if (!recorded && doc.error.message === DATABASE_UNAVAILABLE_MESSAGE) throw new StoreUnavailableError('the tool could not reach the database');
  }
  const finalDoc = doc;
  return daemon.store.transaction((tx) => storeOutcome(tx, call, finalDoc));
}

/** Builds the ToolAgentOutput and stores the tool message (serialized once), unless the id belongs to another call. */
async function storeOutcome(tx: Tx, call: Call, doc: CliDocument): Promise<Outcome> {
  const output = buildToolAgentOutput(doc, call.args, call.toolCallId, deriveUiHints);
  if (doc.ok === false && doc.error.code === 'DUPLICATE_TOOL_CALL_ID') return { kind: 'duplicate', output };
  const row = await tx.messages.insert({
    userId: call.userId,
    threadId: call.threadId,
    role: 'tool',
    content: projectText(output),
    metadataJson: toolMessageMetadata(output),
    toolCallId: call.toolCallId,
    status: output.status,
  });
  return { kind: 'ran', row, output };
}

/** A failure decided by the daemon itself, shaped like project-cli's. */
function refuse(args: ToolCallArgs, code: ToolErrorCode, message: string, extra: Record<string, unknown> = {}): CliDocument {
  return { ok: false, module: args.module, method: args.method, error: { code, message, module: args.module, method: args.method, ...extra } };
}

function replay(daemon: Daemon, conn: Peer, call: Call, row: MessageRow): ToolResponse {
  const output = (JSON.parse(row.metadata) as { tool_agent_output: ToolAgentOutput }).tool_agent_output;
  const { args } = call;
  if (argsSha256(output.tool_call_args) !== call.argsSha256) {
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
    return respond(daemon, conn, call, duplicate, projectText(duplicate), 'caller');
  }
  return respond(daemon, conn, call, output, row.content, 'caller');
}

/**
 * Sends the caller its notifications (partials, then final) and returns the
 * response, which the transport writes after them — all after the commit.
 * The thread's subscribers hear a call that ran from the thread-event bus
 * (subscriptions.ts), which skips the caller's connection; a replayed or
 * refused duplicate reaches the caller only — no second event happened.
 * `heard`: the caller's connection already had these from the bus (its
 * publish came after the store's copy), so nothing is sent twice. A stored
 * message's final `ui_schema` seeds the history cache.
 */
function respond(
  daemon: Daemon,
  conn: Peer,
  call: Call,
  output: ToolAgentOutput,
  text: string,
  caller: 'caller' | 'heard',
  storedId?: string,
): ToolResponse {
  const notifications = notificationsFor(call.threadId, output, compileStoredUi, deriveUiHints);
  if (storedId !== undefined) {
    const final = notifications[notifications.length - 1]!;
    daemon.uiCache.set(storedId, final.ui_schema === undefined ? {} : { ui_schema: final.ui_schema });
  }
  if (caller === 'caller') for (const n of notifications) conn.notify('tool/result', n);
  return { tool_call_id: output.tool_call_id, status: output.status, content: [{ type: 'text', text }] };
}
