/**
 * Contract §12 behind a pooler: daemons whose database URL goes through
 * PgBouncer in transaction pooling mode (Debian's pgbouncer, no prepared
 * statement support), with `store.listen_url` giving the direct URL for the
 * connections that keep session state (LISTEN, call marks). Two daemons
 * share idempotency and fan-out through it, and a daemon survives the server
 * ending every session under load, both executors.
 *
 * The cluster and the pooler are this file's own; skipped when PostgreSQL or
 * pgbouncer is not installed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSession, startHost, type Host } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import { dbCount } from '../helpers/db.js';
import { tempDir } from '../helpers/repo.js';
import {
  freshPgDatabase,
  needsPgBouncer,
  startPgBouncer,
  startPrivateCluster,
  withDatabase,
  type PgBouncer,
  type PrivateCluster,
} from '../helpers/pg.js';
import { loadThroughCuts } from '../helpers/pg-load.js';
import { waitFor } from '../helpers/wait-for.js';
import type { ToolResponse } from '../../src/protocol/index.js';

type Executor = 'inprocess' | 'subprocess';
const EXECUTORS: Executor[] = ['inprocess', 'subprocess'];

const create = (title: string) => ({
  module: 'calendar',
  method: 'create',
  input: { title, start_at: '2026-10-01T09:00:00Z', end_at: '2026-10-01T10:00:00Z' },
});

describe('daemons behind PgBouncer (transaction pooling)', needsPgBouncer, () => {
  let cluster: PrivateCluster;
  let bouncer: PgBouncer;
  before(async () => {
    cluster = await startPrivateCluster();
    bouncer = await startPgBouncer(cluster.url);
  });
  after(async () => {
    await bouncer?.stop();
    await cluster?.stop();
  });

  /** A daemon on the database through the pooler, LISTENing (and marking calls) on the direct URL. */
  async function daemonBehindPooler(db: { url: string; name: string }, executor: Executor): Promise<Host> {
    const config = join(tempDir(), 'toolgate.config.json');
    const agents = { default: { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.read', 'memory.*'] } };
    writeFileSync(config, JSON.stringify({ agents, store: { listen_url: db.url } }), { mode: 0o600 });
    return startHost({ transport: 'ws', db: withDatabase(bouncer.url, db.name), args: ['--executor', executor, '--config', config] });
  }

  for (const executor of EXECUTORS) {
    test(`two daemons: one effect per raced tool_call_id, and B's calls reach A's subscriber (${executor})`, async () => {
      const db = await freshPgDatabase(cluster.url);
      const [a, b] = await Promise.all([daemonBehindPooler(db, executor), daemonBehindPooler(db, executor)]);
      try {
        const [sa, sb] = await Promise.all([a, b].map(async (h) => (await openSession(h, await mintBearer('alice'))).session_id));
        const watcher = await a.connect();
        const sw = (await openSession(watcher, await mintBearer('alice'))).session_id;
        await watcher.request('thread/subscribe', { session_id: sw, thread_id: 'race' });
        const ROUNDS = 6;
        for (let round = 0; round < ROUNDS; round++) {
          const params = (s: string) => ({ session_id: s, thread_id: 'race', tool_call_id: `call-${round}`, args: create(`raced-${round}`) });
          const [ra, rb] = await Promise.all([a.request<ToolResponse>('tool/invoke', params(sa!)), b.request<ToolResponse>('tool/invoke', params(sb!))]);
          assert.equal(ra.status, 'success', JSON.stringify(ra));
          assert.equal(JSON.stringify(ra), JSON.stringify(rb), 'byte-identical answers');
          assert.equal(await dbCount(db.url, 'SELECT count(*) AS n FROM events WHERE title = ?', [`raced-${round}`]), 1, 'one event');
        }
        const seen = () =>
          watcher.wire.filter((e) => e.kind === 'notification' && e.method === 'tool/result' && (e.payload as { final: boolean }).final).map((e) => (e.payload as { tool_call_id: string }).tool_call_id);
        await waitFor(() => seen().length >= ROUNDS, () => `${ROUNDS} tool/result notifications (saw ${seen().join(', ')})`);
        assert.deepEqual(seen(), Array.from({ length: ROUNDS }, (_, r) => `call-${r}`), 'each call once, in thread order, whichever daemon ran it');
        for (const h of [a, b]) assert.doesNotMatch(h.stderr(), /prepared statement|Unhandled/);
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
    });

    test(`the server ends every session every 300 ms under load (${executor})`, async () => {
      const db = await freshPgDatabase(cluster.url);
      const host = await daemonBehindPooler(db, executor);
      try {
        // Four cuts (it was eight): every one ends the pooler's server connections and the direct
        // LISTEN one alike; what is checked after them (survived, clear errors, exactly once) is the same.
        await loadThroughCuts(host, cluster.url, db.url, db.name, 4);
        assert.match(host.stderr(), /reconnected to the database for thread events/);
      } finally {
        await host.stop();
      }
    });
  }
});
