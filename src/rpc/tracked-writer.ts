/**
 * Knows which outgoing messages are still being written, across every
 * connection, so that shutdown can wait for the last responses to leave
 * instead of guessing with a sleep.
 */
import type { Disposable, Message, MessageWriter } from 'vscode-jsonrpc/node';

export class PendingWrites {
  private readonly pending = new Set<Promise<void>>();

  track(write: Promise<void>): Promise<void> {
    this.pending.add(write);
    const done = () => this.pending.delete(write);
    write.then(done, done);
    return write;
  }

  /**
   * Resolves once every write started so far has finished. A handler's
   * response is handed to its writer a tick after the handler settles, so
   * this first lets that tick pass.
   */
  async drained(): Promise<void> {
    await new Promise((r) => setImmediate(r));
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}

/** A MessageWriter that reports each write to a PendingWrites. */
export class TrackedWriter implements MessageWriter {
  constructor(
    private readonly inner: MessageWriter,
    private readonly writes: PendingWrites,
  ) {}

  get onError() {
    return this.inner.onError;
  }

  get onClose() {
    return this.inner.onClose;
  }

  write(msg: Message): Promise<void> {
    return this.writes.track(this.inner.write(msg));
  }

  end(): void {
    this.inner.end();
  }

  dispose(): void {
    (this.inner as Partial<Disposable>).dispose?.();
  }
}
