/**
 * vscode-jsonrpc's `StreamMessageReader`, with a `dispose` that also stops its
 * partial-message timer. The library arms that timer while a message is half
 * read and re-arms it every `partialMessageTimeout` (10 s) for as long as the
 * half message stays — and its `dispose` leaves it armed. A daemon that dies in
 * the middle of a frame (killed, crashed) thus left a referenced timer behind
 * in the host for good: the host process could never exit on its own (seen as
 * a test file that never ended on Node 24 after a SIGKILL of its daemon).
 */
import { StreamMessageReader } from 'vscode-jsonrpc/node';

export class DisposingStreamMessageReader extends StreamMessageReader {
  override dispose(): void {
    // 0: a timer already firing does not arm itself again; the clear stops the armed one now.
    this.partialMessageTimeout = 0;
    (this as unknown as { clearPartialMessageTimer(): void }).clearPartialMessageTimer();
    super.dispose();
  }
}

/**
 * A `DisposingStreamMessageReader` whose close comes after its last message.
 * The library decodes the frames of a read one per tick (a semaphore keeps
 * them in order) but reports its stream's close at once: a connection saw
 * the close of a stdin that ended right behind whole frames before it saw
 * those frames' messages.
 */
export class DrainingStreamMessageReader extends DisposingStreamMessageReader {
  /** Resolves once every body read so far is decoded and handed to the listener (or reported as an error). */
  decoded(): Promise<void> {
    // The library's own queue of decodes: a no-op behind them runs after the last one. A version of the
    // library without it (a private field) closes at once, as before, rather than never.
    const decodes = (this as unknown as { readSemaphore?: { lock?(thunk: () => void): Promise<void> } }).readSemaphore;
    return typeof decodes?.lock === 'function' ? decodes.lock(() => {}) : Promise.resolve();
  }

  protected override fireClose(): void {
    void this.decoded().then(() => super.fireClose());
  }
}
