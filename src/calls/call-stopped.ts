/**
 * Why a running call was stopped (contract §16): cancelled by its user
 * (`call/cancel`, `$/cancelRequest`, MCP `notifications/cancelled`), past its
 * time limit, or cancelled by shutdown. It is the reason of the call's
 * AbortSignal: the executors and the store's unit of work stop on it, and the
 * call ends `done` with a stored failure of this code — unless its writes had
 * already committed, in which case its real outcome stands.
 */
export type StopCode = 'CANCELLED' | 'TIMEOUT';

export class CallStopped extends Error {
  override name = 'CallStopped';
  constructor(
    readonly code: StopCode,
    message: string,
  ) {
    super(message);
  }

  static cancelled(): CallStopped {
    return new CallStopped('CANCELLED', 'the call was cancelled before it completed; nothing it would have written was kept');
  }

  static timedOut(ms: number): CallStopped {
    return new CallStopped('TIMEOUT', `the call did not finish within ${ms} ms`);
  }

  static shutdown(): CallStopped {
    return new CallStopped('CANCELLED', 'the daemon shut down before the call completed; nothing it would have written was kept');
  }
}

/** The CallStopped an aborted signal carries, if that is why it aborted. */
export function stoppedBy(signal: AbortSignal | undefined): CallStopped | undefined {
  return signal?.aborted && signal.reason instanceof CallStopped ? signal.reason : undefined;
}
