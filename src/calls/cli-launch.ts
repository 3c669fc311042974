/**
 * How the subprocess executor starts project-cli: from the V8 start-up
 * snapshot the build makes of the evaluated bundle (dist/project-cli.snapshot.blob,
 * scripts/bundle-cli.mjs) when it runs on this node, else from the bundle
 * through bin/project-cli.cjs (what bin/project-cli.mjs imports). Same program, argv, environment and output
 * either way (contract section 1); the snapshot only skips reading, compiling
 * and evaluating the bundle on every call.
 *
 * A blob fits only the node binary (and CPU) that built it, and a wrong or damaged one
 * makes node abort (or crash) before any JavaScript runs — so the daemon never
 * bets a call on it. At start, in the background, it reads the build's check
 * (cli-snapshot-check.ts): when the build ran a call through this very blob on
 * this very node, that settles it; otherwise it probes the blob once (`--help`
 * through it, with the environment a call has, less its credential and database). A call waits for the
 * build's check (at most a second), then uses the bundle until a probe has passed, and for good when it
 * fails — or
 * when node still refuses the blob for a call (`refused`: the call then runs
 * again from the bundle). Each decision is logged: which mode serves, what
 * showed the blob runs, or why not the snapshot.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Logger } from '../runtime/logger.js';
import { PROJECT_CLI_BUNDLE, PROJECT_CLI_LAUNCHER, PROJECT_CLI_SNAPSHOT } from '../runtime/package-root.js';
import { checkedByBuild } from './cli-snapshot-check.js';

export type CliLaunchMode = 'snapshot' | 'bundle';

/**
 * What a child started from the snapshot has in its environment beside its call's (credential, verify
 * key, database): glibc's malloc told to ask for transparent huge pages (`hugetlb=1`, by madvise) and to
 * take blocks of up to 32 MiB from its heap rather than from mmaps of their own (`mmap_threshold`). Node
 * reads the blob (5.7 MB) into a fresh buffer and copies V8's part and the built-ins' code cache out of
 * it: ~3,000 of the ~5,800 page faults of a call, each ~15 µs on a VM, and nearly all of them gone once
 * those blocks sit in huge pages. A child from the bundle makes no such blocks (measured: no change).
 * A fixed value, read by the dynamic loader only: glibc ignores a tunable it does not know, other C
 * libraries ignore the variable, a kernel without transparent huge pages ignores the advice. The probe
 * and the build's check call (scripts/bundle-cli.mjs) run with it too.
 */
export const SNAPSHOT_LAUNCH_ENV: Readonly<Record<string, string>> = process.platform === 'linux' ? { GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432' } : {};

/** `TOOLGATE_CLI_SNAPSHOT`: `off` (or `0`) starts from the bundle; a path uses that blob instead of the package's. */
const CLI_SNAPSHOT_ENV = 'TOOLGATE_CLI_SNAPSHOT';

const PROBE_TIMEOUT_MS = 30_000;
/** The longest a call waits for the build's check (`whenChecked`); it takes ~15–30 ms of CPU. */
const CHECKED_WAIT_MS = 1_000;

export class CliLauncher {
  private current: CliLaunchMode = 'bundle';
  private readonly snapshotArgs: string[];
  /** Settles with the mode calls use from then on, once the probe is done. */
  readonly ready: Promise<CliLaunchMode>;
  /**
   * Settles once the build's check has been read (~15–30 ms of CPU; cli-snapshot-check.ts): when it vouches
   * for the blob, calls start from the snapshot from then on. Calls wait for this, not for a probe: a daemon's
   * first calls (a host's first prompt, a test's) otherwise all started from the bundle, which costs more.
   */
  readonly checked: Promise<void>;

  /** `blob` null: the bundle, no probe (the caller says why). */
  constructor(blob: string | null, log: Logger) {
    this.snapshotArgs = blob ? ['--snapshot-blob', blob, PROJECT_CLI_BUNDLE] : [];
    let checked!: () => void;
    this.checked = new Promise<void>((resolve) => (checked = resolve)).then(() => void (this.isChecked = true));
    this.markChecked = checked;
    this.ready = blob ? this.decide(blob, log).finally(checked) : Promise.resolve<CliLaunchMode>('bundle').finally(checked);
  }

  private readonly markChecked: () => void;
  private isChecked = false;

  /**
   * `checked`, waited for at most CHECKED_WAIT_MS or until `signal` aborts: the check reads files (a blob on a
   * stalled mount, a FIFO named by TOOLGATE_CLI_SNAPSHOT), and a call must stay answerable and cancellable
   * meanwhile. It then starts in the mode decided so far.
   */
  whenChecked(signal?: AbortSignal): Promise<void> {
    if (this.isChecked || signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, CHECKED_WAIT_MS);
      timer.unref();
      signal?.addEventListener('abort', done, { once: true });
      void this.checked.then(done);
    });
  }

  get mode(): CliLaunchMode {
    return this.current;
  }

  /**
   * How one call starts: node's arguments (argv[1] is the program's path in both modes, the call's words
   * after it) and what its environment holds beside the call's own.
   */
  launch(module: string, method: string): { mode: CliLaunchMode; args: string[]; env: Readonly<Record<string, string>> } {
    const mode = this.current;
    return mode === 'snapshot' ? { mode, args: [...this.snapshotArgs, module, method], env: SNAPSHOT_LAUNCH_ENV } : { mode, args: [PROJECT_CLI_LAUNCHER, module, method], env: {} };
  }

  private async decide(blob: string, log: Logger): Promise<CliLaunchMode> {
    if (!existsSync(blob)) return this.fallBack(blob, 'the start-up snapshot is missing', log);
    const checked = (await checkedByBuild(blob)) ? 'build' : 'probe';
    if (checked === 'build') this.current = 'snapshot';
    // Calls go on from the bundle while a probe runs (a whole node start).
    else this.markChecked();
    const failed = checked === 'probe' ? await probe(blob) : null;
    if (failed) return this.fallBack(blob, failed, log);
    this.current = 'snapshot';
    log.log('info', 'project-cli launch', { mode: 'snapshot', snapshot: blob, checked });
    return 'snapshot';
  }

  /**
   * A call's child could not start from the snapshot the daemon trusted (node refused the blob before any
   * JavaScript ran): every later call starts from the bundle, said once.
   */
  refused(reason: string, log: Logger): void {
    if (this.current !== 'snapshot') return;
    this.current = 'bundle';
    this.fallBack(this.snapshotArgs[1] ?? '', `the snapshot did not start a call: ${reason.slice(0, 200)}`, log);
  }

  private fallBack(blob: string, reason: string, log: Logger): CliLaunchMode {
    log.log('warn', 'project-cli launch', { mode: 'bundle', snapshot: blob, node: process.version, reason });
    return 'bundle';
  }
}

/** Runs `--help` from the blob; null when it answered as project-cli does, else why not. */
function probe(blob: string): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--snapshot-blob', blob, PROJECT_CLI_BUNDLE, '--help'], { env: { ...SNAPSHOT_LAUNCH_ENV }, timeout: PROBE_TIMEOUT_MS, encoding: 'utf8', shell: false }, (err, stdout, stderr) => {
      if (err) {
        const status = err.signal ? `signal ${err.signal}` : `exit ${String(err.code)}`;
        return resolve(`the snapshot does not run on this node (${status}): ${whatWentWrong(stderr)}`);
      }
      resolve(stdout.startsWith('project-cli') ? null : `the snapshot answered --help with: ${whatWentWrong(stdout)}`);
    });
  });
}

/** The line of node's stderr that says what went wrong (an abort prints a banner and a native stack). */
function whatWentWrong(text: string): string {
  const lines = text.split('\n').map((l) => l.trim().replace(/^#\s*/, '')).filter(Boolean);
  return (lines.find((l) => /assert|error|fail|cannot|incompatible/i.test(l)) ?? lines[0] ?? '').slice(0, 200);
}

/** The launcher the daemon's environment asks for (CLI_SNAPSHOT_ENV), probing from now. */
export function cliLauncher(env: NodeJS.ProcessEnv, log: Logger): CliLauncher {
  const knob = env[CLI_SNAPSHOT_ENV]?.trim();
  if (knob === 'off' || knob === '0') {
    log.log('info', 'project-cli launch', { mode: 'bundle', reason: `${CLI_SNAPSHOT_ENV}=${knob}` });
    return new CliLauncher(null, log);
  }
  return new CliLauncher(knob && knob !== '1' ? knob : PROJECT_CLI_SNAPSHOT, log);
}
