/**
 * The subprocess executor answers a call at the end of the child's output,
 * not at the child's exit (src/calls/subprocess-executor.ts): project-cli
 * closes stdout and stderr right before it exits, and the kernel frees a
 * process's memory before it closes its files, so waiting for the exit
 * waited out that teardown on every call. The slot, the timeout and the
 * daemon's shutdown (`drain`) still follow the process itself.
 *
 * The child here is a stand-in for project-cli: it writes a document, closes
 * fds 1 and 2, and then stays alive until the test lets it go (a marker file)
 * — or forever, for the timeout case.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnCliWithin } from '../../../src/calls/subprocess-executor.js';
import type { CliLauncher } from '../../../src/calls/cli-launch.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { tempDir } from '../../helpers/repo.js';

const DOC = { ok: true, module: 'memory', method: 'read', data: { memories: [] } };

/** A child that answers, closes its output, then lingers until `release` exists (never, when absent). */
function lingeringChild(dir: string, release: string | null): string {
  const script = join(dir, 'lingering-cli.cjs');
  writeFileSync(
    script,
    `const fs = require('node:fs');
fs.appendFileSync(${JSON.stringify(join(dir, 'pids'))}, process.pid + '\\n');
fs.writeSync(1, ${JSON.stringify(`${JSON.stringify(DOC)}\n`)});
fs.closeSync(1);
fs.closeSync(2);
const release = ${JSON.stringify(release)};
setInterval(() => { if (release && fs.existsSync(release)) process.exit(0); }, 20);
`,
  );
  return script;
}

/** A launcher that has decided on the bundle (its check read, nothing to wait for). */
const DECIDED = { mode: 'bundle', checked: Promise.resolve(), whenChecked: () => Promise.resolve() };

function launcherOf(script: string): CliLauncher {
  return { ...DECIDED, launch: () => ({ mode: 'bundle', args: [script] }) } as unknown as CliLauncher;
}

const request = (timeoutMs: number) => ({ module: 'memory', method: 'read', input: {}, env: {}, timeoutMs });

test('the answer arrives once the child has closed its output, before it exits; shutdown waits for the exit', { timeout: 30_000 }, async () => {
  const dir = tempDir();
  const release = join(dir, 'release');
  const cli = spawnCliWithin(2, launcherOf(lingeringChild(dir, release)));
  const outcome = await cli.run(request(60_000), createLogger(() => {}, 'error'));
  assert.deepEqual(outcome.doc, DOC);
  let exited = false;
  const drained = cli.exited().then(() => (exited = true));
  // The child cannot have exited: it waits for a file nobody has written yet.
  assert.equal(existsSync(release), false);
  await new Promise((r) => setImmediate(r));
  assert.equal(exited, false, 'drain settled while the child was still running');
  writeFileSync(release, '');
  await drained;
  assert.equal(exited, true);
});

test('a child that closed its output but lingers is still killed at its timeout; the answer stands', { timeout: 30_000 }, async () => {
  const dir = tempDir();
  const lines: string[] = [];
  const cli = spawnCliWithin(1, launcherOf(lingeringChild(dir, null)));
  // The kill comes at the timeout, so the case lasts that long. 2 s: its child (node, a few lines) answered in
  // 200-400 ms with the machine's load average at 9-11 (measured), ~50 ms idle.
  const outcome = await cli.run(request(2_000), createLogger((l) => lines.push(l), 'debug'));
  assert.deepEqual(outcome.doc, DOC, 'answered from its output, not as a TIMEOUT');
  await cli.exited();
  const ran = lines.map((l) => JSON.parse(l) as { msg: string; signal?: string }).find((l) => l.msg === 'project-cli ran');
  assert.equal(ran?.signal, 'SIGKILL', lines.join('\n'));
});

test('a child keeps its slot until it has exited, not only until it answered', { timeout: 30_000 }, async () => {
  const dir = tempDir();
  const release = join(dir, 'release');
  const script = lingeringChild(dir, release);
  // With one slot, the second child may start only once the first is gone: checked when it is launched.
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const overlaps: number[] = [];
  let launches = 0;
  const launcher = {
    ...DECIDED,
    launch: () => {
      if (launches++ > 0) {
        const first = Number(readFileSync(join(dir, 'pids'), 'utf8').split('\n')[0]);
        if (alive(first)) overlaps.push(first);
      }
      return { mode: 'bundle', args: [script] };
    },
  } as unknown as CliLauncher;
  const cli = spawnCliWithin(1, launcher);
  const log = createLogger(() => {}, 'error');
  assert.deepEqual((await cli.run(request(60_000), log)).doc, DOC);
  const second = cli.run(request(60_000), log);
  writeFileSync(release, '');
  assert.deepEqual((await second).doc, DOC);
  await cli.exited();
  assert.equal(launches, 2);
  assert.deepEqual(overlaps, [], 'the second child started while the first was still running');
});

test('a spawn that node refuses at once fails the call as INTERNAL, and frees the slot', { timeout: 30_000 }, async () => {
  // An argument with a NUL byte: spawn throws synchronously (ERR_INVALID_ARG_VALUE) instead of emitting 'error'.
  const launcher = { ...DECIDED, launch: () => ({ mode: 'bundle', args: ['bad\0arg'] }) } as unknown as CliLauncher;
  const lines: string[] = [];
  const cli = spawnCliWithin(1, launcher);
  for (let i = 0; i < 2; i++) {
    const outcome = await cli.run(request(60_000), createLogger((l) => lines.push(l), 'error'));
    assert.equal(outcome.doc.ok, false);
    assert.equal(!outcome.doc.ok && outcome.doc.error.code, 'INTERNAL');
  }
  await cli.exited();
  assert.ok(lines.some((l) => l.includes('project-cli could not start')), lines.join('\n'));
});

test('a child that writes more than max_result_bytes (plus room for a failure) is killed and the call fails INTERNAL', { timeout: 30_000 }, async () => {
  const dir = tempDir();
  // A well-formed document of about 200 kB: whole under the default bound, too large under a 10,000-byte one.
  const script = join(dir, 'big-cli.cjs');
  writeFileSync(script, `process.stdout.write(JSON.stringify({ ok: true, module: 'memory', method: 'read', data: { s: 'x'.repeat(200000) } }));\n`);
  const cli = spawnCliWithin(1, launcherOf(script));
  const log = createLogger(() => {}, 'error');
  const small = await cli.run({ ...request(60_000), maxResultBytes: 10_000 }, log);
  assert.equal(small.doc.ok, false);
  assert.equal(!small.doc.ok && small.doc.error.code, 'INTERNAL');
  assert.match(!small.doc.ok ? small.doc.error.message : '', /too much output/);
  const big = await cli.run(request(60_000), log);
  assert.equal(big.doc.ok, true, 'under the default bound the same document is read whole');
  await cli.exited();
});
