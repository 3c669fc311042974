/**
 * examples/systemd/toolgate.service: systemd accepts it (where systemd-analyze
 * is installed) and it keeps the hardening docs/operations.md promises.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../helpers/repo.js';

const UNIT = join(REPO_ROOT, 'examples', 'systemd', 'toolgate.service');
const ANALYZE = '/usr/bin/systemd-analyze';

test('the unit is hardened as the operations page says', () => {
  const text = readFileSync(UNIT, 'utf8');
  for (const line of ['DynamicUser=yes', 'StateDirectory=toolgate', 'ProtectSystem=strict', 'NoNewPrivileges=yes', 'ProtectHome=yes', 'PrivateTmp=yes', 'CapabilityBoundingSet=', 'KillSignal=SIGTERM', 'ExecReload=/bin/kill -HUP $MAINPID']) {
    assert.match(text, new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm'), line);
  }
  assert.doesNotMatch(text, /^ExecStart=.*(SECRET|TOKEN|password)/im, 'no secret on the command line');
});

test('systemd-analyze verify accepts the unit', { skip: existsSync(ANALYZE) ? false : `${ANALYZE} is not installed` }, () => {
  const r = spawnSync(ANALYZE, ['verify', UNIT], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.equal(r.stderr.trim(), '', r.stderr);
});
