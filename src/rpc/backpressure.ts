/**
 * Flow control for one WebSocket peer that reads slowly: past the high-water
 * mark of unsent bytes we stop reading its requests and hold back the ones
 * already read (so it cannot make us build more replies); below half of it
 * we read and answer again; past the hard limit the peer is dropped. The
 * decision logic is pure — the transport applies it — plus the one promise
 * requests wait on while the peer is paused.
 */
export type FlowAction = 'none' | 'pause' | 'resume' | 'drop';

export class Backpressure {
  private paused = false;
  private waiters: Array<() => void> = [];

  constructor(
    private readonly highWaterBytes: number,
    private readonly maxBufferedBytes: number,
  ) {}

  /** Called with the socket's buffered byte count after every send and send completion. */
  update(buffered: number): FlowAction {
    if (buffered > this.maxBufferedBytes) return 'drop';
    if (!this.paused && buffered > this.highWaterBytes) {
      this.paused = true;
      return 'pause';
    }
    if (this.paused && buffered < this.highWaterBytes / 2) {
      this.paused = false;
      this.release();
      return 'resume';
    }
    return 'none';
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /**
   * Undefined while the peer reads its answers; while it is paused, a promise
   * that resolves when it has read enough of them (or the connection ended,
   * see `end`). A request awaits it before it runs, so its answer is never
   * built while earlier ones wait unsent.
   */
  writable(): Promise<void> | undefined {
    if (!this.paused) return undefined;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The connection is gone: whoever waits goes on (and finds it closed). */
  end(): void {
    this.paused = false;
    this.release();
  }

  private release(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
