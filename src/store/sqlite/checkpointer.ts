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
 * At FULL it also copies the few frames each of this thread's checkpoints
 * left behind, so the WAL starts over (`takeTail`, below).
 */
import { Worker } from 'node:worker_threads';

export interface Checkpointer {
  /** A commit made the WAL longer: every CHECKPOINT_EVERY commits, the thread checkpoints. */
  committed(): void;
  /**
   * True once after each checkpoint the thread finished: the connection then
   * copies the short tail it left (the commits made while it ran) itself,
   * between two groups, so that the WAL starts over from its beginning at
   * the next write instead of growing (see below).
   */
  takeTail(): boolean;
  /** The connection's tail checkpoint failed: reported like the thread's own failures. */
  failed(message: string): void;
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

/*
 * Why the tail: SQLite starts the WAL over from its beginning only at a
 * write that finds every frame already checkpointed. Under steady load the
 * thread never gets there — commits land while it copies — so the WAL grew
 * to the safety net's 10,000 pages (~40 MB), and every commit appended to
 * the file: measured at concurrency 8 (synchronous=FULL), COMMIT p50 ~1.05 ms
 * while the WAL grew against ~0.67 ms once it wrote over its own old frames.
 * The tail is a few commits' pages, copied by the connection between groups
 * — with the checkpoint's two fsyncs and the WAL header's at the restart on
 * the calls' thread, so only where every commit fsyncs (FULL:
 * sqlite-store.ts, `useCheckpointer`).
 */
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
  let tail = false;
  const start = () => {
    const w = new Worker(new URL('./checkpoint-worker.js', import.meta.url), {
      workerData: { file, synchronous },
    });
    w.on('message', (m: { ok: boolean; error?: string }) => {
      waiting = false;
      if (!m.ok) onError(m.error ?? 'checkpoint failed');
      else tail = true;
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
    failed(message) {
      onError(message);
    },
    takeTail() {
      if (!tail) return false;
      tail = false;
      return !stopped;
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
