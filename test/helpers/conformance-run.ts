/**
 * `toolgate conformance` as a host author runs it, for the suites that run it
 * (test/e2e/conformance*.test.ts): the child, its report, and the check that
 * every applicable check passed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { TOOLGATE_BIN, tempDir } from './repo.js';
import { TEST_BEARER_SECRET } from './tokens.js';

/** Runs `toolgate conformance …`; resolves with its exit code and stdout lines. */
export function conformance(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; lines: string[]; stderr: string }> {
  const child = spawn(process.execPath, [TOOLGATE_BIN, 'conformance', ...args], {
    // No NODE_EXTRA_CA_CERTS: every child would spend its start loading certificates.
    env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: tempDir(), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, lines: out.trimEnd().split('\n'), stderr: err })));
}

export const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function assertAllPassed(result: { code: number | null; lines: string[]; stderr: string }, expectSkips: boolean, daemonLog = ''): void {
  const report = result.lines.join('\n');
  // A failure shows the daemon's last log lines too: what it saw when a check failed.
  assert.equal(result.code, 0, `${report}\n${result.stderr}${daemonLog ? `\n--- daemon log (tail) ---\n${daemonLog.slice(-4000)}` : ''}`);
  assert.match(result.lines.at(-1)!, /^\d+ passed, 0 failed$/);
  assert.ok(!result.lines.some((l) => l.startsWith('FAIL')), report);
  assert.equal(result.lines.some((l) => l.startsWith('skip')), expectSkips, report);
}
