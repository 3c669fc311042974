/** What every side-by-side entry of the bench offers: one call, its process, a stop. */
export interface Target {
  readonly name: string;
  /** The server process, for its memory. */
  readonly pid: number;
  /** One `calendar.create` (call number `i`, unique within the run). Rejects on any failure. */
  call(i: number): Promise<void>;
  stop(): Promise<void>;
}
