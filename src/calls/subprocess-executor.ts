/**
 * project-cli in a child process per call. No transaction is held while the
 * child runs (it writes through its own connection): the credential's audit
 * row commits before the credential is handed out, the child commits the
 * action with its call record, then the daemon stores the tool message. A
 * child cut short (TIMEOUT, INTERNAL) may have committed just before: its
 * record is then the answer.
 *
 * Where the engine is shared by other daemons, the call is marked as this
 * daemon's while it runs across those commits: their recovery at start must
 * not write its tool message.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { CliDocument } from '../cli-router/core.js';
import { CLI_ENV } from '../cli-router/run-cli.js';
import { DATABASE_UNAVAILABLE_MESSAGE, StoreUnavailableError } from '../store/store.js';
import { stoppedBy } from './call-stopped.js';
import { issueFor, storeOutcome, type AdmittedCall, type Outcome } from './call.js';
import { signCredential } from '../auth/credential-issuer.js';
import { cliLauncher, type CliLauncher, type CliLaunchMode } from './cli-launch.js';
import type { ExecDeps, Executor } from './executor.js';
import type { Logger } from '../runtime/logger.js';
import { Semaphore } from './semaphore.js';
import type { CallPrincipal } from './call.js';
import { DEFAULT_MAX_RESULT_BYTES, MAX_TIMER_MS } from '../protocol/limits.js';

/** One call across the process boundary. */
export interface ExecRequest {
  module: string;
  method: string;
  input: Record<string, unknown>;
  /** The CLI's whole environment: credential, verify key, database. Nothing else. */
  env: Record<string, string>;
  /** The backstop: a child still alive this long after it started is killed (SIGKILL), even after it answered. */
  timeoutMs: number;
  /**
   * The call's signal (src/calls): on abort the child gets SIGTERM, then SIGKILL
   * after `graceMs`; a call still waiting for a process slot never starts one.
   */
  signal?: AbortSignal | undefined;
  graceMs?: number | undefined;
  /**
   * `limits.max_result_bytes` of the call: the child's stdout is read up to
   * `stdoutCapOf` it, then the child is killed and the call fails INTERNAL.
   * project-cli itself refuses a larger result (RESULT_TOO_LARGE), so only
   * a misbehaving child meets this; absent → the default bound.
   */
  maxResultBytes?: number | undefined;
}

export interface ExecOutcome {
  doc: CliDocument;
}

/** Runs project-cli once (`spawnCliWithin`; tests substitute their own). */
export type RunCli = (req: ExecRequest, log: Logger) => Promise<ExecOutcome>;

export class SubprocessExecutor implements Executor {
  readonly kind = 'subprocess' as const;

  /** `exited`: settles once every child started so far has exited (`spawnCliWithin`'s). */
  constructor(
    private readonly runCli: RunCli,
    private readonly exited: () => Promise<void> = () => Promise.resolve(),
  ) {}

  /** A call is answered before its child has exited: shutdown waits for the children too. */
  drain(): Promise<void> {
    return this.exited();
  }

  /** Runs project-cli once for the request (no store work). */
  run(req: ExecRequest, log: Logger): Promise<ExecOutcome> {
    return this.runCli(req, log);
  }

  async execute(deps: ExecDeps, session: CallPrincipal, call: AdmittedCall, log: Logger, _optimistic?: boolean, signal?: AbortSignal): Promise<Outcome> {
    const release = await deps.store.holdCall?.(call.userId, call.threadId, call.toolCallId);
    try {
      return await this.runWhileHeld(deps, session, call, log, signal);
    } finally {
      await release?.();
    }
  }

  private async runWhileHeld(deps: ExecDeps, session: CallPrincipal, call: AdmittedCall, log: Logger, signal: AbortSignal | undefined): Promise<Outcome> {
    const stored = await deps.store.read((tx) => tx.messages.getToolMessage(call.userId, call.threadId, call.toolCallId));
    if (stored) return { kind: 'stored', row: stored };

    const issued = issueFor(session, call);
    const credential = await signCredential(issued.claims, deps.signingKey);
    // Stopped before its credential was recorded: nothing was issued, nothing ran.
    await deps.store.transaction((tx) => tx.credentialAudit.record(issued.audit), { signal });
    // PostgreSQL: the child's sessions carry a name of their own, so a stopped child's can be ended (below).
    const dbSession = deps.store.endSessionsNamed ? `toolgate-call-${issued.claims.jti}` : undefined;
    const env = {
      [CLI_ENV.credential]: credential,
      [CLI_ENV.verifyKey]: JSON.stringify(deps.signingKey.publicJwk),
      [CLI_ENV.db]: dbSession ? withApplicationName(deps.dbPath, dbSession) : deps.dbPath,
    };
    const { module, method, input } = call.args;
    const timeoutMs = Math.min(deps.timeoutMs(`${module}.${method}`) + deps.cancelGraceMs, MAX_TIMER_MS);
    // A stop ends the child's server sessions at once, beside its SIGTERM: a statement the child sent may wait
    // for a lock, and the server runs it — to its COMMIT — even once the child is gone, if the lock comes free
    // before the sessions are ended below.
    const endNow = () => void deps.store.endSessionsNamed!(dbSession!).catch(() => {});
    if (dbSession) signal?.addEventListener('abort', endNow, { once: true });
    let { doc } = await this.run({ module, method, input, env, timeoutMs, signal, graceMs: deps.cancelGraceMs, maxResultBytes: deps.maxResultBytes }, log).finally(() => {
      if (dbSession) signal?.removeEventListener('abort', endNow);
    });
    const stop = stoppedBy(signal);
    if (!doc.ok && (doc.error.code === 'TIMEOUT' || doc.error.code === 'INTERNAL' || doc.error.code === 'CANCELLED')) {
      // A killed child's server session may still hold a statement waiting for a lock: end it first, so
      // what the record says now is final.
      if (dbSession) await deps.store.endSessionsNamed!(dbSession);
      // The child may have committed just before it was stopped: its record wins (a stop cannot undo a commit).
      const recorded = await deps.store.read((tx) => tx.toolCalls.get(call.userId, call.threadId, call.toolCallId));
      if (recorded && recorded.args_sha256 === call.argsSha256) doc = JSON.parse(recorded.outcome) as CliDocument;
      // The child met the outage and recorded nothing: no effect to store, and a retry runs the call.
      else if (!recorded && doc.error.message === DATABASE_UNAVAILABLE_MESSAGE) throw new StoreUnavailableError('the tool could not reach the database');
      // Stopped, nothing committed: stored as stopped by the call service, as the in-process unit's stop is
      // (tool-invoke.ts `settle`: after any earlier run of the call has ended, and only if none committed it).
      else if (!doc.ok && stop && doc.error.code === stop.code && doc.error.message === stop.message) throw stop;
    }
    const finalDoc = doc;
    return deps.store.transaction((tx) => storeOutcome(tx, call, finalDoc));
  }
}

/**
 * Starts `node bin/project-cli.cjs <module> <method>` (or the same program
 * from its start-up snapshot, as `launcher` decides) with an argv array (no
 * shell), the input as JSON on stdin — never as flags, so no value can be
 * read as an option — and only the environment it is given.
 * At most `maxProcesses` children run at once daemon-wide.
 */
export function spawnCliWithin(maxProcesses: number, launcher: CliLauncher): { run: RunCli; exited: () => Promise<void> } {
  // One Node per call costs ~100 ms of CPU: past a few per core they only queue in the kernel.
  const slots = new Semaphore(maxProcesses);
  const running = new Set<Promise<void>>();
  const run: RunCli = async (req, log) => {
    // The daemon's first calls wait for the build's word on the snapshot (cli-launch.ts `whenChecked`).
    await launcher.whenChecked(req.signal);
    return new Promise<ExecOutcome>((resolve, reject) => {
      // A slot is held until its child has exited (the processes are what it bounds); the call's
      // answer is ready sooner, at the end of the child's output.
      const held = slots.run(() => {
        // Stopped just as it got a slot: no process is started.
        const stopped = stoppedBy(req.signal);
        if (stopped) {
          resolve(execFailure(req, stopped.code, stopped.message));
          return Promise.resolve();
        }
        const first = spawnCli(launcher.launch(req.module, req.method), req, log);
        return first.outcome.then(async (outcome) => {
          if (!('refused' in outcome)) {
            resolve(outcome);
            return first.exited;
          }
          // Node would not load the start-up snapshot (another CPU than the build's, say): no JavaScript
          // ran, so nothing of the call happened. The daemon moves to the bundle for good and runs the
          // same call from there, once.
          await first.exited;
          launcher.refused(outcome.refused, log);
          const stoppedMeanwhile = stoppedBy(req.signal);
          if (stoppedMeanwhile) {
            resolve(execFailure(req, stoppedMeanwhile.code, stoppedMeanwhile.message));
            return undefined;
          }
          const again = spawnCli(launcher.launch(req.module, req.method), req, log);
          void again.outcome.then((o) => resolve('refused' in o ? execFailure(req, 'INTERNAL', 'the tool could not be started') : o));
          return again.exited;
        });
      }, req.signal);
      running.add(held);
      // Stopped while it waited for a slot: it leaves the queue and starts no process. A throw before any
      // child ran (the launcher's) fails the call; the slot is free again either way.
      held
        .catch((err: unknown) => {
          const stopped = stoppedBy(req.signal);
          if (stopped && err === stopped) resolve(execFailure(req, stopped.code, stopped.message));
          else reject(err);
        })
        .finally(() => running.delete(held));
    });
  };
  // A call still waiting for `checked` adds its child first (its wait was queued before this one's).
  const exited = async () => {
    await launcher.checked;
    await Promise.allSettled([...running]);
  };
  return { run, exited };
}

/**
 * The most of a child's stdout read: its document is at most the result
 * bound (a success's projection is checked by project-cli) plus room for a
 * failure's details (`issues`, `input_schema`). Contract section 21: no
 * call grows the daemon by more than a small multiple of that bound.
 */
function stdoutCapOf(maxResultBytes: number = DEFAULT_MAX_RESULT_BYTES): number {
  return maxResultBytes + 64 * 1024;
}

function execFailure(req: ExecRequest, code: 'TIMEOUT' | 'INTERNAL' | 'CANCELLED', message: string): ExecOutcome {
  const { module, method } = req;
  return { doc: { ok: false, module, method, error: { code, message, module, method } } };
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

/** A child that node could not start from the start-up snapshot: why, in node's words. */
interface SnapshotRefused {
  refused: string;
}

/**
 * What node writes to stderr, before any JavaScript runs, when it cannot use a start-up snapshot: a blob
 * made with other V8 flags or CPU features ("Failed to load the startup snapshot because…", exit 14), or
 * one that is no blob at all (Node 20 and 24: an assertion in node::SnapshotData's reader, then an abort;
 * Node 26: "The startup snapshot is not a Node.js snapshot blob.").
 */
const SNAPSHOT_REFUSED = /[^\n]*startup snapshot[^\n]*|[^\n]*node::SnapshotData::[^\n]*/;

/**
 * One child. `outcome` settles once its stdout and stderr have both ended —
 * project-cli closes them right before it exits (src/cli-router/main.ts
 * `exitNow`), so the answer does not wait for the kernel to tear the process
 * down — or, for a child that was killed or never started, at its end.
 * `exited` settles when the process is gone; until then its timeout still
 * applies (a child that closed its output but lingers is killed).
 */
function spawnCli({ mode, args, env }: { mode: CliLaunchMode; args: string[]; env: Readonly<Record<string, string>> }, req: ExecRequest, log: Logger): { outcome: Promise<ExecOutcome | SnapshotRefused>; exited: Promise<void> } {
  let resolveOutcome!: (outcome: ExecOutcome | SnapshotRefused) => void;
  const outcome = new Promise<ExecOutcome | SnapshotRefused>((r) => (resolveOutcome = r));
  let resolveExited!: () => void;
  const exited = new Promise<void>((r) => (resolveExited = r));
  let child: ChildProcessWithoutNullStreams;
  try {
    child = spawn(process.execPath, args, {
      env: { ...env, ...req.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: false,
      windowsHide: true,
    });
  } catch (e) {
    // Refused before any process existed (an argument or environment value node will not pass on,
    // an errno spawn throws rather than reports): the call fails, nothing runs.
    log.log('error', 'project-cli could not start', { err: (e as Error).message });
    return { outcome: Promise.resolve(execFailure(req, 'INTERNAL', 'the tool could not be started')), exited: Promise.resolve() };
  }
  const out: Buffer[] = [];
  let outBytes = 0;
  const maxStdoutBytes = stdoutCapOf(req.maxResultBytes);
  let err = '';
  let timedOut = false;
  let tooLarge = false;
  let settled = false;
  const settle = (o: ExecOutcome | SnapshotRefused) => {
    if (settled) return;
    settled = true;
    resolveOutcome(o);
  };
  /** The answer from what the child wrote (called once its output has ended, or at its end). */
  const answer = () => {
    if (settled) return;
    if (err.trim()) log.log('warn', 'project-cli stderr', { stderr: err.trim() });
    const stopped = stoppedBy(req.signal);
    if (stopped) return settle(execFailure(req, stopped.code, stopped.message));
    if (timedOut) return settle(execFailure(req, 'TIMEOUT', `the call did not finish within ${req.timeoutMs} ms`));
    if (tooLarge) return settle(execFailure(req, 'INTERNAL', 'the tool produced too much output'));
    const refused = mode === 'snapshot' && outBytes === 0 ? SNAPSHOT_REFUSED.exec(err)?.[0] : undefined;
    if (refused) return settle({ refused });
    const doc = parseDocument(Buffer.concat(out).toString('utf8'));
    if (!doc) {
      log.log('error', 'project-cli printed no valid document', { launch: mode });
      return settle(execFailure(req, 'INTERNAL', 'the tool failed'));
    }
    settle({ doc });
  };
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, req.timeoutMs);
  // The call was stopped (cancel, its time limit, shutdown): SIGTERM — the child dies and its open
  // transaction rolls back — then SIGKILL after the grace. Its output is the answer only if it had
  // already finished (its stdout then ended before the signal mattered).
  let graceTimer: NodeJS.Timeout | undefined;
  const stop = () => {
    if (settled) return;
    child.kill('SIGTERM');
    graceTimer = setTimeout(() => child.kill('SIGKILL'), req.graceMs ?? 2_000);
  };
  req.signal?.addEventListener('abort', stop, { once: true });
  let openStreams = 2;
  const ended = () => {
    if (--openStreams === 0) answer();
  };
  child.stdout.on('data', (chunk: Buffer) => {
    outBytes += chunk.length;
    if (outBytes > maxStdoutBytes) {
      if (!tooLarge) log.log('warn', 'project-cli wrote more than its result bound; killed', { max_bytes: maxStdoutBytes });
      tooLarge = true;
      out.length = 0;
      child.kill('SIGKILL');
    } else out.push(chunk);
  });
  child.stdout.once('end', ended);
  child.stderr.on('data', (chunk: Buffer) => {
    if (err.length < 64 * 1024) err += chunk.toString('utf8');
  });
  child.stderr.once('end', ended);
  child.stdin.on('error', () => {
    /* the child may exit before reading stdin; its exit is what counts */
  });
  child.on('error', (e) => {
    // A child that never started (no pid) ends here; a kill that failed leaves a process whose
    // 'close' is still to come, and its slot held until then.
    if (child.pid !== undefined) return log.log('warn', 'project-cli could not be signalled', { err: e.message });
    clearTimeout(timer);
    req.signal?.removeEventListener('abort', stop);
    log.log('error', 'project-cli could not start', { err: e.message });
    settle(execFailure(req, 'INTERNAL', 'the tool could not be started'));
    resolveExited();
  });
  child.on('close', (code, signal) => {
    clearTimeout(timer);
    clearTimeout(graceTimer);
    req.signal?.removeEventListener('abort', stop);
    log.log('debug', 'project-cli ran', { launch: mode, exit_code: code, ...(signal ? { signal } : {}) });
    const stopped = stoppedBy(req.signal);
    if (stopped) log.log('info', 'project-cli stopped', { code: stopped.code, exit_code: code, ...(signal ? { signal } : {}) });
    answer();
    resolveExited();
  });
  child.stdin.end(JSON.stringify(req.input));
  return { outcome, exited };
}

/** The database URL with `application_name` set (the URL's own value wins over the driver's default). */
function withApplicationName(url: string, name: string): string {
  const u = new URL(url);
  u.searchParams.set('application_name', name);
  return u.toString();
}

/**
 * The subprocess executor, at most `maxProcesses` children at once daemon-wide,
 * started from project-cli's start-up snapshot once a probe shows it runs here
 * (cli-launch.ts; `env` may turn that off).
 */
export function subprocessExecutor(maxProcesses: number, env: NodeJS.ProcessEnv, log: Logger): SubprocessExecutor {
  const launcher = cliLauncher(env, log);
  const cli = spawnCliWithin(maxProcesses, launcher);
  return new SubprocessExecutor(cli.run, cli.exited);
}
