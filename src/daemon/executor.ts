import { spawn } from 'node:child_process';
import type { CliDocument } from '../cli-router/core.js';
import type { Logger } from './logger.js';
import { PROJECT_CLI_BIN } from './package-root.js';
import { Semaphore } from './semaphore.js';

/** One call across the restricted boundary. */
export interface ExecRequest {
  module: string;
  method: string;
  input: Record<string, unknown>;
  /** The CLI's whole environment: credential, verify key, database. Nothing else. */
  env: Record<string, string>;
  timeoutMs: number;
}

export interface ExecOutcome {
  doc: CliDocument;
  exitCode: number;
}

/** Runs project-cli for a call in a child process, which writes through its own connection. */
export interface SubprocessExecutor {
  readonly kind: 'subprocess';
  run(req: ExecRequest, log: Logger): Promise<ExecOutcome>;
}

/**
 * The same CLI core (`src/cli-router/core.ts`) run in this process, inside
 * the call's own unit of work on the daemon's connection (tool-invoke.ts):
 * no child, no token round trip, the same claim checks.
 */
export interface InprocessExecutor {
  readonly kind: 'inprocess';
}

export type Executor = SubprocessExecutor | InprocessExecutor;

const MAX_STDOUT_BYTES = 16 * 1024 * 1024;

function failure(req: ExecRequest, code: 'TIMEOUT' | 'INTERNAL', message: string): ExecOutcome {
  const { module, method } = req;
  return { doc: { ok: false, module, method, error: { code, message, module, method } }, exitCode: 1 };
}

/** Parses the CLI's stdout: exactly one JSON document, checked for its shape. */
function parseDocument(stdout: string): CliDocument | null {
  try {
    const doc = JSON.parse(stdout) as CliDocument;
    if (doc && typeof doc === 'object' && typeof doc.ok === 'boolean' && (doc.ok ? 'data' in doc : typeof doc.error?.code === 'string')) {
      return doc;
    }
  } catch {
    /* reported by the caller */
  }
  return null;
}

/**
 * Starts `node bin/project-cli.mjs <module> <method>` with an argv array (no
 * shell), the input as JSON on stdin — never as flags, so no value can be
 * read as an option — and only the environment it is given.
 */
export function subprocessExecutor(maxProcesses: number): SubprocessExecutor {
  // One Node per call costs ~100 ms of CPU: past a few per core they only queue in the kernel.
  const slots = new Semaphore(maxProcesses);
  return {
    kind: 'subprocess',
    run(req, log) {
      return slots.run(() => spawnCli(req, log));
    },
  };
}

function spawnCli(req: ExecRequest, log: Logger): Promise<ExecOutcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [PROJECT_CLI_BIN, req.module, req.method], {
      env: req.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: false,
      windowsHide: true,
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let timedOut = false;
    let tooLarge = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, req.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > MAX_STDOUT_BYTES) {
        tooLarge = true;
        child.kill('SIGKILL');
      } else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < 64 * 1024) err += chunk.toString('utf8');
    });
    child.stdin.on('error', () => {
      /* the child may exit before reading stdin; its exit is what counts */
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      log.log('error', 'project-cli could not start', { err: e.message });
      resolve(failure(req, 'INTERNAL', 'the tool could not be started'));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (err.trim()) log.log('warn', 'project-cli stderr', { stderr: err.trim() });
      if (timedOut) return resolve(failure(req, 'TIMEOUT', `the call did not finish within ${req.timeoutMs} ms`));
      if (tooLarge) return resolve(failure(req, 'INTERNAL', 'the tool produced too much output'));
      const doc = parseDocument(Buffer.concat(out).toString('utf8'));
      if (!doc) {
        log.log('error', 'project-cli printed no valid document', { exit_code: code });
        return resolve(failure(req, 'INTERNAL', 'the tool failed'));
      }
      resolve({ doc, exitCode: code ?? 1 });
    });
    child.stdin.end(JSON.stringify(req.input));
  });
}

/**
 * In-process calls cannot be killed, so the per-call timeout cannot apply:
 * answering TIMEOUT while the work goes on to commit would store a lie. The
 * work is bounded (one unit of work of synchronous SQLite), so it runs to
 * the end and a slow call is only logged (tool-invoke.ts).
 */
export function inprocessExecutor(): InprocessExecutor {
  return { kind: 'inprocess' };
}
