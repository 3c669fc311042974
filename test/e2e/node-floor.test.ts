/**
 * The oldest Node `engines` allows runs a build another Node made, and an
 * older one is refused in a line. A build's V8 code caches once crashed every
 * other Node 20 release (all of them report V8 11.3.244.8, so V8 took the
 * cache): a build made on 20.20.2 ended `toolgate --version` on 20.16.0 in a
 * segmentation fault, and a subprocess call, refused by the start-up snapshot
 * (another Node), fell back to the bundle and crashed there. And project-cli
 * needs `process.getBuiltinModule`, which Node 20 has from 20.16.
 *
 * This checkout's build (made by the Node running the tests) is run by other
 * Node binaries, named by the environment; .ci/run installs them from the npm
 * registry's `node` package:
 * - TOOLGATE_NODE_FLOOR: node@20.16.0, the floor of `engines`;
 * - TOOLGATE_NODE_BELOW_FLOOR: node@20.15.1, one release below it.
 * Without them the tests skip, saying so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ToolgateClient } from '../../src/client/index.js';
import type { ToolResponse } from '../../src/protocol/index.js';
import { PROJECT_CLI_BIN, REPO_ROOT, TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { mintBearer, TEST_BEARER_SECRET } from '../helpers/tokens.js';

/** Every child here is bounded: a launcher that hangs fails its test, never stalls the process running it. */
const LIMIT = { encoding: 'utf8', timeout: 30_000 } as const;
const version = (node: string) => spawnSync(node, ['--version'], LIMIT).stdout?.trim() ?? '';
/** The native-module ABI of `node` (better-sqlite3 is compiled for one); undefined when it does not run. */
const abi = (node: string) => {
  const r = spawnSync(node, ['-p', 'process.versions.modules'], LIMIT);
  return r.status === 0 ? r.stdout.trim() : undefined;
};
/**
 * The Node binary `name` names, when it can run this checkout's build: one of the same major (ABI) as the
 * Node running the tests, which compiled better-sqlite3. A pass on Node 24 or 26 (scripts/node-pass.sh)
 * inherits the variables, and its build is not one a Node 20 can load.
 */
function otherNode(name: string): { node?: string; skip: string | false } {
  const node = process.env[name];
  if (!node) return { skip: `${name} is not set (.ci/run installs it from the npm registry's node package)` };
  const its = abi(node);
  // A binary that does not run is a broken install: the test runs, and fails on it.
  if (its !== undefined && its !== process.versions.modules) return { skip: `${name} is a Node of another major than this build's (${process.version})` };
  return { node, skip: false };
}
const floor = otherNode('TOOLGATE_NODE_FLOOR');
const below = otherNode('TOOLGATE_NODE_BELOW_FLOOR');

test(
  'the floor of engines (Node 20.16.0) runs this build: the launchers, and a subprocess call from a stdio session',
  { skip: floor.skip, timeout: 60_000 },
  async (t) => {
    const node = floor.node!;
    assert.equal(version(node), 'v20.16.0', `TOOLGATE_NODE_FLOOR names ${node}`);
    const dir = tempDir('toolgate-node-floor-');
    const env = { PATH: process.env.PATH ?? '', TOOLGATE_HOME: dir, TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET };
    const v = spawnSync(node, [TOOLGATE_BIN, '--version'], { ...LIMIT, env });
    assert.equal(v.status, 0, `toolgate --version: ${v.status} ${v.signal} ${v.stderr}`);
    const help = spawnSync(node, [PROJECT_CLI_BIN, '--help'], { ...LIMIT, env });
    assert.equal(help.status, 0, `project-cli --help: ${help.status} ${help.signal} ${help.stderr}`);
    const direct = spawnSync(node, [join(REPO_ROOT, 'bin', 'project-cli.cjs'), '--help'], { ...LIMIT, env });
    assert.equal(direct.status, 0, `bin/project-cli.cjs --help: ${direct.status} ${direct.signal} ${direct.stderr}`);

    // The default executor: each call starts project-cli with the daemon's own node (this one).
    const tg = ToolgateClient.spawn({ command: [node, TOOLGATE_BIN], args: ['--db', join(dir, 'floor.db')], env });
    // Should a request hang past the test's time limit, the daemon must not outlive the test.
    t.after(() => tg.process?.kill('SIGKILL'));
    let stderr = '';
    tg.process!.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    try {
      await tg.request('initialize', { protocol_version: '1', client_info: { name: 'node-floor', version: '1' } });
      const { session_id } = await tg.request<{ session_id: string }>('session/open', { auth: { type: 'bearer', token: await mintBearer('floor-user') } });
      const r = await tg.request<ToolResponse>('tool/invoke', {
        session_id,
        thread_id: 'floor',
        tool_call_id: 'c1',
        args: { module: 'calendar', method: 'create', input: { title: 'On the floor', start_at: '2026-04-21T10:00:00Z', end_at: '2026-04-21T11:00:00Z' } },
      });
      assert.equal(r.status, 'success', `${JSON.stringify(r)}\n${stderr}`);
    } finally {
      assert.equal(await tg.stop(), 0, stderr);
    }
    assert.doesNotMatch(stderr, /toolgate crashed|Segmentation/);
  },
);

test(
  'below the floor (Node 20.15.1) both launchers refuse in one line, exit 2',
  { skip: below.skip },
  () => {
    const node = below.node!;
    assert.equal(version(node), 'v20.15.1', `TOOLGATE_NODE_BELOW_FLOOR names ${node}`);
    for (const [name, launcher, args] of [
      ['toolgate', TOOLGATE_BIN, ['--version']],
      ['project-cli', PROJECT_CLI_BIN, ['--help']],
    ] as const) {
      const r = spawnSync(node, [launcher, ...args], { ...LIMIT, env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: tempDir() } });
      assert.equal(r.status, 2, `${name}: ${r.stderr}`);
      assert.equal(r.stderr, `${name}: Node.js v20.15.1 is too old: ${name} needs Node.js 20.16+, 22.3+, 24 or 26\n`);
    }
  },
);
