/**
 * Every `--help` example that runs by itself, as printed (moved out of
 * quickstart.test.ts, the other docs that run, so the two files run side by side).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALL_SPECS } from '../../src/app/cli-commands.js';
import { REPO_ROOT, tempDir } from '../helpers/repo.js';

/**
 * Every `--help` example that runs by itself (not a daemon that serves until
 * stopped, not one that needs another terminal, not one that points at the
 * reader's own implementation), pasted into a shell where
 * `toolgate` and `project-cli` are this checkout's bins, in a fresh home: each exits 0.
 */
test('the --help examples run as printed', { timeout: 300_000 }, () => {
  const home = tempDir('toolgate-help-examples-');
  const bin = join(home, 'bin');
  mkdirSync(bin);
  for (const name of ['toolgate', 'project-cli']) {
    writeFileSync(join(bin, name), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(REPO_ROOT, 'bin', `${name}.mjs`))} "$@"\n`, { mode: 0o755 });
  }
  const env = { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: home };
  const db = join(home, 'c.db');
  const serves = (line: string) => /^(TOOLGATE_BEARER_SECRET=… )?toolgate serve /.test(line) || line.includes('--ws ws://') || line.includes('# your own implementation');
  let ran = 0;
  for (const spec of ALL_SPECS) {
    // One shell per command: an example may set a variable the next one uses (T=$(… dev-token …)).
    const lines = spec.examples.filter((l) => !serves(l)).map((l) => l.replaceAll('/tmp/c.db', db));
    if (lines.length === 0) continue;
    const r = spawnSync('bash', ['-c', `set -eo pipefail\n${lines.join('\n')}`], { cwd: home, env, encoding: 'utf8', timeout: 240_000 });
    assert.equal(r.status, 0, `toolgate ${spec.name} --help's examples:\n${lines.join('\n')}\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
    ran += lines.length;
  }
  assert.ok(ran >= 5, `ran ${ran} examples`);
});
