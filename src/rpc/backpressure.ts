/**
 * Flow control for one WebSocket peer that reads slowly: past the high-water
 * mark of unsent bytes we stop reading its requests (so it cannot make us
 * queue more replies); below half of it we read again; past the hard limit
 * the peer is dropped. Pure decision logic — the transport applies it.
 */
export type FlowAction = 'none' | 'pause' | 'resume' | 'drop';

export class Backpressure {
  private paused = false;

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
      return 'resume';
    }
    return 'none';
  }

  get isPaused(): boolean {
    return this.paused;
  }
}
