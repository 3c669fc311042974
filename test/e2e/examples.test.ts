/**
 * The example hosts in examples/ run as their comments say, against the real
 * daemon, through toolgate/client (the demo host has its own test:
 * demo.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT, TOOLGATE_BIN, tempDir } from '../helpers/repo.js';

test('examples/stdio-host: one call, its notification before the response, the history byte for byte, exit 0', () => {
  // As examples/README.md prints it: dev-token, then the host with --dev, in a fresh data folder.
  const env = { PATH: process.env.PATH ?? '', HOME: tempDir('toolgate-home-') };
  const token = execFileSync(process.execPath, [TOOLGATE_BIN, 'dev-token', '--user', 'alice'], { env, encoding: 'utf8' }).trim();
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'dist', 'examples', 'stdio-host', 'main.js'), '--dev'], {
    env: { ...env, TOOLGATE_TOKEN: token },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines[0], 'tool for the model: project_cli');
  assert.match(lines[1]!, /^session for alice: \d+ actions allowed$/);
  assert.match(lines[2]!, /^tool\/result call-\d+ success final=true ui=card$/);
  assert.match(lines[3]!, /^text for the model: \{"status":"success","module":"memory","method":"update","data":/);
  assert.equal(lines[4], 'history: 1 message(s); the last is byte for byte that text: true');
  assert.ok(!r.stdout.includes(token), 'the token is never printed');
});
