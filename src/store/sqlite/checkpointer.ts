/**
 * WAL checkpoints on a worker thread (checkpoint-worker.ts) instead of in the
 * commit that crosses SQLite's auto-checkpoint threshold. Measured on the
 * in-process daemon (synchronous=NORMAL, so the commit's own fsync is out of
 * the figure): the auto-checkpoint was ~0.5 ms per call on average, half the
 * commit time, paid in one stall every ~60 calls on the thread that serves
 * every connection.
 *
 * Only the daemon uses it (its store lives long; a project-cli process keeps
 * SQLite's own auto-checkpoint). The daemon's connection keeps a higher
 * auto-checkpoint threshold as a safety net should this thread fall behind.
 */
import { Worker } from 'node:worker_threads';

export interface Checkpointer {
  /** A commit made the WAL longer: every CHECKPOINT_EVERY commits, the thread checkpoints. */
  committed(): void;
  /** Ends the thread (after a checkpoint in progress finishes). */
  stop(): Promise<void>;
}

/**
 * Commits between checkpoints: a lone call's commit writes ~16 WAL pages, so
 * this is about SQLite's own threshold (1000 pages) — checkpointing more often
 * only writes the same hot pages again, with two more fsyncs each time. The
 * thread starts with the first checkpoint: an idle daemon does not pay for it.
 */
const CHECKPOINT_EVERY = 64;

export function startCheckpointer(
  file: string,
  synchronous: 'FULL' | 'NORMAL',
  onError: (message: string) => void,
): Checkpointer {
  let worker: Worker | undefined;
  let started = false;
  let commits = 0;
  let waiting = false;
  let stopped = false;
  const start = () => {
    const w = new Worker(new URL('./checkpoint-worker.js', import.meta.url), {
      workerData: { file, synchronous },
    });
    w.on('message', (m: { ok: boolean; error?: string }) => {
      waiting = false;
      if (!m.ok) onError(m.error ?? 'checkpoint failed');
    });
    w.on('error', (err) => onError(err.message));
    // A thread that is gone leaves the daemon's own auto-checkpoint in charge until the next
    // due checkpoint starts a fresh one.
    w.on('exit', () => {
      if (worker !== w) return;
      worker = undefined;
      started = false;
      waiting = false;
    });
    w.unref();
    return w;
  };
  return {
    committed() {
      if (stopped || ++commits % CHECKPOINT_EVERY !== 0) return;
      if (!started) {
        started = true;
        worker = start();
      }
      // One checkpoint at a time: one still running when the next is due covers those frames too.
      if (!worker || waiting) return;
      waiting = true;
      worker.postMessage('checkpoint');
    },
    async stop() {
      stopped = true;
      const w = worker;
      worker = undefined;
      if (!w) return;
      const exited = new Promise<void>((r) => w.once('exit', () => r()));
      // Held open until the thread has closed its connection (it is unref'd while it runs).
      w.ref();
      w.postMessage('stop');
      await exited;
    },
  };
}
