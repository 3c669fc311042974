/**
 * `toolgate conformance` as a host author runs it, for the suites that run it
 * (test/e2e/conformance*.test.ts): the child, its report, and the check that
 * every applicable check passed; and the same runner in this process
 * (`runInProcess`), for the runs that are not about the command itself.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { runConformance, type RunOptions } from '../../src/conformance/runner.js';
import { WireValidator } from '../../src/conformance/wire-validator.js';
import { REPO_ROOT, TOOLGATE_BIN, tempDir } from './repo.js';
import { TEST_BEARER_SECRET } from './tokens.js';

export interface ConformanceResult {
  code: number | null;
  lines: string[];
  stderr: string;
}

/** Runs `toolgate conformance …`; resolves with its exit code and stdout lines. */
export function conformance(args: string[], env: Record<string, string> = {}): Promise<ConformanceResult> {
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

let validator: WireValidator | undefined;

/**
 * The command's runner (src/conformance/runner.ts) in this process, the report as `conformance()`
 * resolves it: the same lines, and the code the command exits with (0 iff every check passed). One
 * validator for every run of the process: it compiles each schema once.
 */
export async function runInProcess(opts: Omit<RunOptions, 'write' | 'validator' | 'schemasDir'>): Promise<ConformanceResult> {
  const lines: string[] = [];
  validator ??= new WireValidator(join(REPO_ROOT, 'schemas'));
  const report = await runConformance({ ...opts, validator, write: (l) => lines.push(l) });
  return { code: report.failed === 0 ? 0 : 1, lines, stderr: '' };
}

export const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function assertAllPassed(result: ConformanceResult, expectSkips: boolean, daemonLog = ''): void {
  const report = result.lines.join('\n');
  // A failure shows the daemon's last log lines too: what it saw when a check failed.
  assert.equal(result.code, 0, `${report}\n${result.stderr}${daemonLog ? `\n--- daemon log (tail) ---\n${daemonLog.slice(-4000)}` : ''}`);
  assert.match(result.lines.at(-1)!, /^\d+ passed, 0 failed$/);
  assert.ok(!result.lines.some((l) => l.startsWith('FAIL')), report);
  assert.equal(result.lines.some((l) => l.startsWith('skip')), expectSkips, report);
}
