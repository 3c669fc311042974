/**
 * package.json's "engines" is Node 20.16+ (22.3+ on 22): project-cli's
 * launcher and bundle use process.getBuiltinModule, which older releases
 * lack. There both launchers say so in one line and exit 2, rather than a
 * daemon that starts and fails every subprocess call with a TypeError. An
 * older node is simulated here by a preload that removes the function.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, tempDir } from '../../helpers/repo.js';

test('on a node without process.getBuiltinModule (before 20.16) both launchers refuse in one line, exit 2', () => {
  const dir = tempDir('toolgate-old-node-');
  const preload = join(dir, 'old-node.cjs');
  writeFileSync(preload, 'delete process.getBuiltinModule;\n');
  for (const [name, launcher, args] of [
    ['toolgate', join(REPO_ROOT, 'bin', 'toolgate.mjs'), ['--version']],
    ['project-cli', join(REPO_ROOT, 'bin', 'project-cli.cjs'), ['--help']],
    ['project-cli', join(REPO_ROOT, 'bin', 'project-cli.mjs'), ['--help']],
  ] as const) {
    const r = spawnSync(process.execPath, ['--require', preload, launcher, ...args], { env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: dir }, encoding: 'utf8' });
    assert.equal(r.status, 2, `${launcher}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `${name}: Node.js ${process.version} is too old: ${name} needs Node.js 20.16+, 22.3+, 24 or 26\n`);
  }
});
