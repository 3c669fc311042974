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
