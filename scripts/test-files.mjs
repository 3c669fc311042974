// Which compiled suites the SQLite pass runs (scripts/run-tests.mjs), and which of them share a process.
//
// A test file's own process costs ~0.85 s of CPU before its first test: Node's start, then ~300 modules of
// dist/src loaded again. The unit suites share one process (scripts/unit-suites.mjs). Of the outside-in
// suites (test/e2e, test/soak, test/fuzz), the light ones — where that start is a large part of the file —
// share GROUPS processes (scripts/e2e-group-N.mjs), the way vscode-jsonrpc's mocha suites share one; the
// heavy ones (HEAVY: ≥ ~11 s each, measured) keep a process each and start first, longest first, so the
// schedule stays fine-grained at its end.
//
// In a group each suite runs inside a `describe` named by its file: its own top-level `before`/`after`
// hooks run around its own tests, and suites run one after the other, as two files in one lane did. What
// a group does not give is a fresh process per suite: a suite must leave no daemon, server, browser or
// timer behind (the group's process would not end), and must not change process-wide state (no
// `process.env` writes, no global dispatchers, no `process.on` handlers) — none of them does.
import { existsSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

export const root = new URL('..', import.meta.url).pathname;
const compiled = (s) => join(root, 'dist', 'test', `${s}.test.js`);

/**
 * The outside-in suites with a process of their own, longest first (a long file started last would run
 * alone at the end while the other lane idles). Wall times of the SQLite pass on this 2-core machine,
 * 2026-12-07: 26 s down to 11 s. A name here that no longer exists is simply not found.
 */
export const HEAVY = [
  'e2e/pg-pgbouncer',
  'e2e/mcp-inspector',
  'e2e/conformance-mutations',
  'e2e/pg-outage',
  'e2e/crash-durability',
  'e2e/inspector-live',
  'e2e/mcp-elicitation',
  'e2e/call-lifecycle',
  'soak/ws-soak',
  'e2e/first-hour',
  'e2e/package-tarball',
  'e2e/mcp-app-browser',
  'e2e/inspector-renderer',
  'e2e/project-cli',
  'e2e/quickstart',
  'e2e/inspector-approval',
  'e2e/approval',
  'e2e/operations',
  'e2e/conformance-ws',
  'e2e/help-examples',
  'e2e/cli-snapshot',
  'e2e/config-reload',
].map(compiled);

/**
 * Not in the PostgreSQL pass's shared list: these start a cluster (and a pooler) of their own, since they
 * restart or cut the server, and skip when PostgreSQL is not installed. They run once: in the PostgreSQL
 * pass when there is one, else in the SQLite pass.
 */
export const OWN_CLUSTER_SUITES = ['e2e/pg-outage', 'e2e/pg-pgbouncer'].map(compiled).filter((f) => existsSync(f));

/**
 * The suites the PostgreSQL pass runs on the shared throwaway cluster: outside-in (daemon over stdio and
 * WebSocket, security, durability, UI) plus the engine's own. They share PG_GROUPS processes
 * (scripts/pg-group-N.mjs), each suite in a `describe` of its own as in the e2e groups; every test has
 * databases of its own (test/helpers/pg.ts), so the groups run at once on the one cluster.
 */
export const PG_SUITES = [
  'unit/store/pg-store',
  'e2e/pg-two-daemons',
  'e2e/pg-open-errors',
  'e2e/pg-connection',
  'e2e/pg-round-trips',
  'unit/daemon/thread-order',
  'e2e/daemon-skeleton',
  'e2e/ws-transport',
  'unit/daemon/ui-on-the-wire',
  'unit/daemon/history-paging',
  'e2e/hardening',
  'e2e/executors',
  'e2e/exactly-once',
  'unit/daemon/daemon-errors',
  'e2e/skills-and-profiles',
  'unit/http/ag-ui-sse',
  'unit/daemon/actions-flow',
  'unit/daemon/bearer-auth',
  'e2e/automation',
  'e2e/call-lifecycle',
  'e2e/quotas',
  'e2e/config-reload',
  'e2e/mcp-tasks',
  'e2e/load-balancer',
  'unit/calls/expiry-sweeper',
  // Dealt to the groups in turn: approval (~52 s on PostgreSQL) and the byte budget to the lighter group 1.
  'e2e/approval-fanout',
  'e2e/approval',
  'unit/store/pg-quotas',
  'unit/store/message-byte-budget',
  // Contract section 21 on PostgreSQL, which refuses U+0000 and lone surrogates itself (~5 s).
  'e2e/malformed-strings',
].map(compiled).filter((f) => existsSync(f));

/**
 * Processes the PostgreSQL pass's shared-cluster suites share, run at once: two, one a core. Dealt round
 * robin from PG_SUITES's order: ~125 s and ~107 s of suites (alone, 2026-12-08), and the two suites with
 * clusters of their own (~29 s) follow in the lane that frees first.
 */
export const PG_GROUPS = 2;
export const pgGroupFile = (n) => join(root, 'scripts', `pg-group-${n}.mjs`);

/** The shared-cluster suites of PostgreSQL group `n` (1…PG_GROUPS). */
export function pgGroupMembers(n) {
  return PG_SUITES.filter((_, i) => i % PG_GROUPS === n - 1);
}

/** Processes the light outside-in suites share: five of ~45 s each, measured. */
export const GROUPS = 5;
export const groupFile = (n) => join(root, 'scripts', `e2e-group-${n}.mjs`);

/**
 * Every compiled outside-in suite: each dist/test/…/x.test.js whose source test/…/x.test.ts exists outside
 * test/unit, by name. Named one by one, because a folder would also run the helper modules, and a stale
 * compiled suite whose source moved.
 */
export function outsideInSuites() {
  return readdirSync(join(root, 'test'), { recursive: true })
    .filter((f) => f.endsWith('.test.ts') && !f.startsWith(`unit${sep}`))
    .map((f) => join(root, 'dist', 'test', f.replace(/\.ts$/, '.js')))
    .filter((f) => existsSync(f))
    .sort();
}

/** The light suites of group `n` (1…GROUPS): those not HEAVY, dealt round robin by name. */
export function groupMembers(n) {
  return outsideInSuites()
    .filter((f) => !HEAVY.includes(f))
    .filter((_, i) => i % GROUPS === n - 1);
}

/**
 * Runs suites in this process, each inside a `describe` of its own, named by its file. `describe` runs its
 * callback at once, so each waits for the suite before it to have loaded: a module's top-level code (and a
 * top-level await of a helper it shares with another suite) then runs within its own suite's `describe`, and
 * its top-level `test()`, `before()` and `after()` land there. In the PostgreSQL pass each suite's fresh
 * databases are dropped as it ends (test/helpers/pg.ts drops them once per process otherwise).
 */
export async function runGroup(files) {
  const { after, describe } = await import('node:test');
  let previous = Promise.resolve();
  for (const file of files) {
    const before = previous;
    let loaded;
    previous = new Promise((resolve) => (loaded = resolve));
    describe(relative(join(root, 'dist', 'test'), file), async () => {
      // Awaited through a promise made here: node:test finds the suite a test() call belongs to through the
      // async resources made within its callback, and `before` was made outside it (awaited directly, the
      // suite's tests would land at the top level).
      await new Promise((resolve) => void before.then(resolve));
      try {
        await import(pathToFileURL(file).href);
      } finally {
        loaded();
      }
      if (process.env.TOOLGATE_TEST_PG_URL) {
        after(async () => (await import(pathToFileURL(join(root, 'dist', 'test', 'helpers', 'pg.js')).href)).dropAllFreshDatabases());
      }
    });
  }
}
