/**
 * Contract §12 from outside: a daemon survives its database. Under a steady
 * load of calls, the server ends every session of the daemon's database
 * every 300 ms, five times (`pg_terminate_backend`), or restarts (`pg_ctl restart -m
 * fast`); the daemon never exits, every call in flight fails with a clear
 * "database unavailable" error (a tool error `INTERNAL` or a JSON-RPC
 * error), and a host that retries each call with its tool_call_id until it
 * succeeds ends with exactly one effect per call — both executors.
 *
 * The cluster is this file's own (scripts/pg-test-cluster.sh), so restarting
 * it never disturbs another suite; the file is skipped when PostgreSQL is not
 * installed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHost } from '../helpers/host.js';
import { waitFor } from '../helpers/wait-for.js';
import { freshPgDatabase, needsPgServer, startPrivateCluster, type PrivateCluster } from '../helpers/pg.js';
import { assertExactlyOnce, assertSurvived, loadThroughCuts, startLoad, WORKERS } from '../helpers/pg-load.js';

type Executor = 'inprocess' | 'subprocess';
const EXECUTORS: Executor[] = ['inprocess', 'subprocess'];

describe('a daemon survives its database', needsPgServer, () => {
  let cluster: PrivateCluster;
  before(async () => {
    cluster = await startPrivateCluster();
  });
  after(() => cluster?.stop());

  for (const executor of EXECUTORS) {
    test(`pg_terminate_backend of all its sessions every 300 ms under load (${executor})`, async () => {
      const db = await freshPgDatabase(cluster.url);
      const host = await startHost({ transport: 'ws', db: db.url, args: ['--executor', executor] });
      try {
        // Five cuts (it was ten): with WORKERS calls always in flight each cut meets some, which the
        // next line asserts; the properties checked (survived, clear errors, exactly once) are the same.
        const load = await loadThroughCuts(host, cluster.url, db.url, db.name, 5);
        assert.ok(load.failures.length > 0, 'the cuts reached calls in flight');
        assert.match(host.stderr(), /lost the database connection that listens for thread events; reconnecting/);
        // The LISTEN connection reconnects on its own backoff, which calls may outrun: wait for it.
        await waitFor(() => /reconnected to the database for thread events/.test(host.stderr()), 'the thread-event connection to come back', 30_000);
      } finally {
        await host.stop();
      }
    });

    test(`pg_ctl restart -m fast under load (${executor})`, async () => {
      const db = await freshPgDatabase(cluster.url);
      const host = await startHost({ transport: 'ws', db: db.url, args: ['--executor', executor] });
      try {
        const load = await startLoad(host);
        await load.ackedMore(WORKERS);
        await cluster.restart();
        await load.ackedMore(WORKERS);
        await load.finish();
        assertSurvived(host, load);
        await assertExactlyOnce(db.url, load);
        // The LISTEN connection reconnects on its own backoff, which calls may outrun: wait for it.
        await waitFor(() => /reconnected to the database for thread events/.test(host.stderr()), 'the thread-event connection to come back', 30_000);
      } finally {
        await host.stop();
      }
    });
  }
});
