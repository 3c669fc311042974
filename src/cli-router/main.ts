import { closeSync, fstatSync, readFileSync, writeSync } from 'node:fs';
import { CLI_ENV, closeCliStores, runCli } from './run-cli.js';
import { BoundedFileError, readBoundedFile } from './bounded-file.js';
import { helpFor } from './help.js';
import { REGISTRY } from './registry.js';
import { ACTION_EXAMPLES } from '../protocol/action-table.js';
import { CredentialClaims } from './credential.js';

/**
 * What both launchers run (bin/project-cli.cjs and the V8 start-up snapshot
 * scripts/bundle-cli.mjs builds): `main`, and a crash as one INTERNAL
 * document on stdout, its stack on stderr, exit 1.
 */
export async function runProjectCli(): Promise<void> {
  await main().catch((err: unknown) => {
    writeStdout(`${JSON.stringify({ ok: false, module: null, method: null, error: { code: 'INTERNAL', message: 'internal error', module: null, method: null } })}\n`);
    process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'project-cli crashed', err: String((err as Error | undefined)?.stack ?? err) })}\n`);
    process.exitCode = 1;
  });
}

/** Set once anything went out through `process.stdout` or `process.stderr`, whose writes may still be queued. */
let viaStreams = false;

/**
 * Ends the process now, with its exit code, once `runProjectCli` is done —
 * what both launchers call last. A natural exit disposes of V8's heap page
 * by page (~1 ms, munmap after munmap after the answer was written);
 * `process.exit` leaves the pages to the kernel. stdout and stderr are closed
 * first: on Linux the kernel frees a process's memory before it closes its
 * files, so the daemon, which answers at the end of both streams, would
 * otherwise wait out that teardown (~4 ms of every subprocess call) too.
 *
 * Only when nothing can still be queued: the answer went out by `writeSync`,
 * and nothing went through the streams, whose writes to a pipe are
 * asynchronous — help, a stdout fallback, a warning Node printed, and the
 * log lines of a crash or of a failed handler (both end in exit code 1, an
 * INTERNAL document). Nothing else is left open: the stores are closed before
 * the answer is written. Elsewhere than on Linux, where this was measured,
 * the natural exit.
 */
export function exitNow(): void {
  if (viaStreams || process.exitCode === 1 || process.platform !== 'linux') return;
  for (const fd of [1, 2]) {
    try {
      closeSync(fd);
    } catch {
      /* already closed: nothing to wait for */
    }
  }
  process.exit();
}

/**
 * Run once when the build takes the start-up snapshot (scripts/bundle-cli.mjs),
 * never by a call: builds every action's input schema (the bundle builds them
 * lazily, one action per process) and runs each, and the credential's claims
 * schema, over a made-up value once, so that V8 has compiled what a parse
 * runs. A call started from the snapshot then finds both built and compiled:
 * building and first-running them was ~4 ms of such a call's start-up.
 * Pure: no random state, no clock, no store.
 */
export function warmSnapshot(): void {
  for (const [name, action] of REGISTRY) {
    action.input.safeParse(ACTION_EXAMPLES[name as keyof typeof ACTION_EXAMPLES]);
    void action.describedBy;
  }
  CredentialClaims.safeParse({ iss: 'x', aud: 'x', sub: 'x', jti: 'x', iat: 0, exp: 0, actions: ['calendar.create'], call: { thread_id: 't', tool_call_id: 'c', args_sha256: '0'.repeat(64) } });
}

/** `project-cli` process entry: stdin (when piped), env, argv → one JSON document + exit code. */
export async function main(): Promise<void> {
  // Help is text, needs no credential and is answered before stdin is read.
  const help = helpFor(process.argv.slice(2));
  if (help) {
    viaStreams = true;
    process.stdout.write(help.stdout);
    process.stderr.write(help.stderr);
    process.exitCode = help.exitCode;
    return;
  }
  // A verify key file that is a FIFO or /dev/zero would hang the read: bad usage, refused like a bad --help.
  const keyFile = keyFileProblem(process.env);
  if (keyFile) {
    viaStreams = true;
    process.stderr.write(`project-cli: ${keyFile}\n`);
    process.exitCode = 2;
    return;
  }
  // Node prints a warning through process.stderr: the answer's end must not cut it off (exitNow).
  process.once('warning', () => (viaStreams = true));
  const stdin = stdinIsTerminal() ? null : await readStdin();
  const outcome = await runCli({ argv: process.argv.slice(2), env: process.env, stdin });
  // A PostgreSQL pool would otherwise keep the process alive until its idle timeout.
  await closeCliStores();
  writeStdout(`${outcome.stdout}\n`);
  process.exitCode = outcome.exitCode;
}

/**
 * Why PROJECT_CLI_VERIFY_KEY_FILE must not be read (not a regular file of at most 1 MiB), or null. A file
 * that is missing or unreadable is the credential check's to refuse (UNAUTHENTICATED, exit 3), as before.
 */
function keyFileProblem(env: NodeJS.ProcessEnv): string | null {
  const file = env[CLI_ENV.verifyKeyFile];
  if (!file || env[CLI_ENV.verifyKey]) return null;
  try {
    readBoundedFile(file);
    return null;
  } catch (err) {
    if (err instanceof BoundedFileError) return err.unreadable ? null : `${CLI_ENV.verifyKeyFile}: ${file}: ${err.message}`;
    throw err;
  }
}

/**
 * The document, written to fd 1 directly: `process.stdout` on a pipe (how the
 * daemon starts the CLI) builds a `net.Socket`, loading `node:net` for one
 * write. A child's stdio is blocking (libuv sets it so), so the write is
 * whole; a non-blocking descriptor (EAGAIN) hands the rest to the stream.
 * A reader that went away (EPIPE) has nobody to tell.
 */
function writeStdout(text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let written = 0;
  try {
    while (written < bytes.length) written += writeSync(1, bytes, written);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EPIPE') return; // nobody reads the answer any more
    if (code !== 'EAGAIN') throw err;
    viaStreams = true;
    process.stdout.write(bytes.subarray(written));
  }
}

/**
 * A terminal (or /dev/null, which reads as empty anyway) has no input to
 * read. Asked of the descriptor, since `process.stdin.isTTY` builds the stream.
 */
function stdinIsTerminal(): boolean {
  try {
    return fstatSync(0).isCharacterDevice();
  } catch {
    return true; // fd 0 closed: no input
  }
}

/**
 * All of stdin. A synchronous read of fd 0 first: touching `process.stdin`
 * on a pipe loads `node:net` and builds a socket, ~10 ms of a start-up that
 * every subprocess call pays. A non-blocking descriptor (EAGAIN) falls back
 * to the stream.
 */
async function readStdin(): Promise<string> {
  try {
    return readFileSync(0, 'utf8');
  } catch {
    return readAll(process.stdin);
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}
