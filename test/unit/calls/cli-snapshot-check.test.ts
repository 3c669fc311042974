/**
 * The build's check of the project-cli start-up snapshot (src/calls/cli-snapshot-check.ts): it settles
 * the launch only for the very blob the build ran a call through, on the very node that ran it. The
 * package's blob and its check are the build's own (scripts/bundle-cli.mjs); the copies here are
 * changed one fact at a time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkedByBuild, cpuOf, snapshotCheckPath, snapshotFacts } from '../../../src/calls/cli-snapshot-check.js';
import { PROJECT_CLI_SNAPSHOT } from '../../../src/runtime/package-root.js';
import { tempDir } from '../../helpers/repo.js';

const built = existsSync(PROJECT_CLI_SNAPSHOT) && process.platform === 'linux';

test('the build wrote its check beside the blob, and it holds on the node that built it', { skip: !built && 'no start-up snapshot on this node, or not Linux (no check is written there)' }, async (t) => {
  const now = await snapshotFacts(PROJECT_CLI_SNAPSHOT);
  if (!now) return t.skip('/proc/cpuinfo does not describe this CPU: no check is written here');
  const written = JSON.parse(readFileSync(snapshotCheckPath(PROJECT_CLI_SNAPSHOT), 'utf8')) as Record<string, unknown>;
  // The blob's time aside: a copied dist/ has another, and the check still holds.
  const timeless = (facts: Record<string, unknown>) => ({ ...facts, blob: { ...(facts.blob as object), mtimeMs: 0 } });
  assert.deepEqual(timeless(written), timeless(now));
  assert.equal(await checkedByBuild(PROJECT_CLI_SNAPSHOT), true);
});

test('no check, another node, another blob or an unreadable check: not checked', { skip: !built && 'no start-up snapshot on this node, or not Linux (no check is written there)' }, async (t) => {
  const dir = tempDir();
  const blob = join(dir, 'project-cli.snapshot.blob');
  copyFileSync(PROJECT_CLI_SNAPSHOT, blob);
  // A whole second, which a file's time keeps exactly when it is set back to it below.
  const builtAt = new Date('2026-12-07T12:00:00Z');
  utimesSync(blob, builtAt, builtAt);
  assert.equal(snapshotCheckPath(blob), join(dir, 'project-cli.snapshot.checked.json'));
  assert.equal(await checkedByBuild(blob), false, 'no check beside the blob');

  const facts = await snapshotFacts(blob);
  if (!facts) return t.skip('/proc/cpuinfo does not describe this CPU: no check is written here');
  writeFileSync(snapshotCheckPath(blob), `${JSON.stringify(facts)}\n`);
  assert.equal(await checkedByBuild(blob), true, 'the same facts, written as the build writes them');
  const npmTime = new Date('1985-10-26T08:15:00Z');
  utimesSync(blob, npmTime, npmTime);
  assert.equal(await checkedByBuild(blob), true, 'a copy whose time is another (npm sets every file’s): hashed, the same bytes');
  utimesSync(blob, builtAt, builtAt);

  const otherNode = { ...facts, node: 'v20.0.0' };
  writeFileSync(snapshotCheckPath(blob), JSON.stringify(otherNode));
  assert.equal(await checkedByBuild(blob), false, 'another node version');

  const exec = facts.exec as { size: number };
  writeFileSync(snapshotCheckPath(blob), JSON.stringify({ ...facts, exec: { ...exec, size: exec.size + 1 } }));
  assert.equal(await checkedByBuild(blob), false, 'another node binary at the same path');

  const cpu = facts.cpu as Record<string, string>;
  writeFileSync(snapshotCheckPath(blob), JSON.stringify({ ...facts, cpu: { ...cpu, flags: `${cpu.flags!} made_up_feature` } }));
  assert.equal(await checkedByBuild(blob), false, 'a CPU with other features (V8 refuses such a blob)');

  writeFileSync(snapshotCheckPath(blob), JSON.stringify(facts));
  const bytes = readFileSync(blob);
  const at = bytes.length >> 1;
  bytes[at] = bytes[at]! ^ 0xff;
  writeFileSync(blob, bytes);
  assert.equal(await checkedByBuild(blob), false, 'one byte of the blob changed, its size not');
  utimesSync(blob, builtAt, builtAt);
  assert.equal(await checkedByBuild(blob), true, 'the build’s size and time are taken at its word: the blob is not read (a bad one falls back at its first call)');

  // A check that says less than the build writes is no check, whatever the blob's size and time.
  const blobOf = facts.blob as Record<string, unknown>;
  const malformed: Array<[string, unknown]> = [
    ['no sha256', { ...facts, blob: { size: blobOf.size, mtimeMs: blobOf.mtimeMs } }],
    ['a null sha256', { ...facts, blob: { ...blobOf, sha256: null } }],
    ['a sha256 that is no hex digest', { ...facts, blob: { ...blobOf, sha256: 'x' } }],
    ['no mtimeMs (an older build)', { ...facts, blob: { size: blobOf.size, sha256: blobOf.sha256 } }],
    ['a null blob', { ...facts, blob: null }],
    ['a blob that is a string', { ...facts, blob: 'abc' }],
    ['null', null],
    ['an array', [facts]],
  ];
  for (const [what, check] of malformed) {
    writeFileSync(snapshotCheckPath(blob), JSON.stringify(check));
    assert.equal(await checkedByBuild(blob), false, what);
  }

  writeFileSync(snapshotCheckPath(blob), '{not json');
  assert.equal(await checkedByBuild(blob), false, 'an unreadable check');
  assert.equal(await checkedByBuild(join(dir, 'missing.blob')), false, 'no blob');
});

test("the CPU is the first processor's vendor, family, model and flags; without them there are no facts", () => {
  const info = 'processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 avx2\n\nprocessor\t: 1\nvendor_id\t: Other\n';
  assert.deepEqual(cpuOf(info), { vendor: 'AuthenticAMD', family: '26', model: '2', flags: 'fpu sse2 avx2' });
  assert.equal(cpuOf('processor\t: 0\nmodel name\t: ARMv8\n'), null);
});
