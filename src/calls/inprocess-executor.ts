/**
 * The CLI core (`src/cli-router/core.ts`) run in this process, the whole
 * call as one unit of work on the daemon's connection: the stored answer if
 * there is one; else the credential's audit row, the action and its call
 * record (`execute`), and the tool message — committed or undone together.
 * The first attempt does not read the stored answer first (`optimistic`,
 * both engines): a call stored before fails the unit's write on the unique
 * keys instead, and the caller answers from the store.
 *
 * No token round trip: the core is handed the claims the daemon has just
 * issued for exactly this admitted call (its action, its key, its args'
 * hash), so the admission `admitCall` made is the only one.
 *
 * A stopped call (cancelled, past its time limit, shutdown: the call's
 * AbortSignal) stops its unit of work before its next statement or its
 * commit — the unit rolls back, so nothing it wrote survives — and the call
 * is stored as failed with the stop's code. A unit whose commit began ends as
 * committed: its real outcome stands. (On SQLite a unit's statements run
 * without yielding, so a stop takes effect while the unit waits for its
 * group or for another process's lock, or undoes it right after it ran.)
 */
import { execute } from '../cli-router/core.js';
import { issueFor, storeOutcome, type AdmittedCall, type Outcome } from './call.js';
import type { ExecDeps, Executor } from './executor.js';
import type { Logger } from '../runtime/logger.js';
import type { CallPrincipal } from './call.js';
import { checkedToolMessage, type CheckedToolMessage } from './tool-message.js';

export class InProcessExecutor implements Executor {
  readonly kind = 'inprocess' as const;

  execute(deps: ExecDeps, session: CallPrincipal, call: AdmittedCall, _log: Logger, optimistic = false, signal?: AbortSignal): Promise<Outcome> {
    // A stop rejects the unit with its CallStopped, after undoing it whole; tool-invoke.ts stores the call as stopped.
    return deps.store.transaction(async (tx): Promise<Outcome> => {
      // A new call (the usual one) skips reading its stored answer: the unique keys catch a stored one.
      if (optimistic && tx.assumeNewCall) tx.assumeNewCall(call.userId, call.threadId, call.toolCallId);
      else {
        const stored = await tx.messages.getToolMessage(call.userId, call.threadId, call.toolCallId);
        if (stored) return { kind: 'stored', row: stored };
      }
      const issued = issueFor(session, call);
      await tx.credentialAudit.record(issued.audit);
      // The record and the tool message are checked once, together, before the record is written:
      // the tool message's ToolAgentOutput holds the document's every part.
      let built: CheckedToolMessage | undefined;
      const { module, method, input } = call.args;
      const { doc } = await execute(tx, call.action, {
        claims: issued.claims,
        module,
        method,
        input,
        argsSha256: call.argsSha256,
        checkRecord: (recorded, stdout) => {
          built = checkedToolMessage(recorded, call.args, call.toolCallId, stdout);
        },
      });
      return storeOutcome(tx, call, doc, built?.doc === doc ? built : undefined);
    }, { signal });
  }
}
