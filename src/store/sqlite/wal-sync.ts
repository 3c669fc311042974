import { open, type FileHandle } from 'node:fs/promises';

/**
 * `synchronous=FULL` with the fsync off the JavaScript thread.
 *
 * At FULL, SQLite's COMMIT fsyncs the WAL inside the statement, so the
 * daemon's only JavaScript thread waits for the disk on every group
 * (bench/commit-block.ts measured a fifth to a third of the wall time at
 * concurrency 8). Here the connection runs at `synchronous=NORMAL` — COMMIT
 * writes the group's frames into the WAL file and returns — and this class
 * then `fdatasync`s the WAL file on libuv's thread pool. The group's answers
 * are released only once that sync is done, so nothing is acknowledged
 * before it is on the disk; meanwhile the loop reads, validates and runs the
 * next group.
 *
 * Why that is FULL's guarantee, not NORMAL's:
 *  - an fsync flushes the file (the inode), whichever descriptor asks, so one
 *    on our own read-only handle makes every frame written before it durable;
 *  - at NORMAL SQLite still syncs the WAL header when it starts the WAL over
 *    and syncs the WAL before every checkpoint (and the database after), so
 *    frames are either in a synced WAL or in a synced database file;
 *  - the connection holds the WAL open, so SQLite never deletes it under us
 *    (it does so only when the last connection closes).
 *
 * Syncs run one after another: a sync that starts after a COMMIT covers that
 * COMMIT and every earlier one.
 */
export class WalSync {
  private handle: Promise<FileHandle> | undefined;
  private last: Promise<void> = Promise.resolve();

  constructor(private readonly walFile: string) {}

  /** Resolves once every frame committed before this call is durable; rejects when the disk says no. */
  sync(): Promise<void> {
    const next = this.last.catch(() => undefined).then(async () => {
      // Opened on the first sync: the WAL file exists from the first COMMIT on.
      this.handle ??= open(this.walFile, 'r');
      try {
        await (await this.handle).datasync();
      } catch (err) {
        this.handle = undefined;
        throw err;
      }
    });
    this.last = next;
    return next;
  }

  /** Waits for the syncs asked for so far, then closes the handle. */
  async close(): Promise<void> {
    await this.last.catch(() => undefined);
    const handle = this.handle;
    this.handle = undefined;
    if (handle) await (await handle).close().catch(() => undefined);
  }
}
