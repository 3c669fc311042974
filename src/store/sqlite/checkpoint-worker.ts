/**
 * The checkpoint thread (checkpointer.ts starts it): its own connection to
 * the daemon's SQLite file, on which it copies committed WAL frames back
 * into the database — `PRAGMA wal_checkpoint(PASSIVE)`, which never blocks
 * a writer or a reader — each time the daemon asks (every so many commits).
 *
 * A checkpoint is mostly waiting for the disk (it writes the pages and
 * fsyncs the database file); on the daemon's thread it stalled every call
 * queued behind the commit that triggered it. Durability does not depend on
 * it: every commit is already durable in the WAL (`synchronous` applies here
 * too, so a checkpoint is as careful as the daemon's own would be).
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { SynchronousMode } from '../../protocol/config.js';

interface Params {
  file: string;
  synchronous: SynchronousMode;
}

const { file, synchronous } = workerData as Params;
const port = parentPort!;
const db = new Database(file, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma(`synchronous = ${synchronous}`);
// This connection never writes; it must not start a checkpoint of its own at close either.
db.pragma('wal_autocheckpoint = 0');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

port.on('message', (msg: 'checkpoint' | 'stop') => {
  if (msg === 'stop') {
    db.close();
    port.close();
    return;
  }
  try {
    checkpoint.get();
    port.postMessage({ ok: true });
  } catch (err) {
    port.postMessage({ ok: false, error: (err as Error).message });
  }
});
