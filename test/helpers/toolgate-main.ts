/**
 * `toolgate <args>` run in this process through the binary's own entry,
 * `main(argv, io)` (src/app/cli.ts): its exit code, stdout and stderr, as
 * `spawnSync` gives them for the spawned binary. For the many cases of a
 * matrix that end before anything serves — a flag, a config file, a missing
 * secret refused in one line with exit 2 — where a process per case cost
 * ~0.3 s of CPU each and checked nothing more than one spawned case of the
 * same test does (the process boundary: the launcher, the exit code as a
 * process's, the real stderr).
 *
 * Only for runs that fail before serving: `serve` serves this process's own
 * stdio or port, so a start that (wrongly) succeeded is reported as a failure
 * after `REFUSAL_TIMEOUT_MS` rather than waited for.
 */
import { main } from '../../src/app/cli.js';

export interface MainRun {
  status: number;
  stdout: string;
  stderr: string;
}

/** Long enough for any refused start on a loaded machine; a refused start takes milliseconds. */
const REFUSAL_TIMEOUT_MS = 30_000;

export async function toolgateMain(args: string[], env: NodeJS.ProcessEnv): Promise<MainRun> {
  let stdout = '';
  let stderr = '';
  const io = { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, env };
  let timer: NodeJS.Timeout | undefined;
  const served = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`toolgate ${args.join(' ')} did not end within ${REFUSAL_TIMEOUT_MS} ms: it serves (stderr: ${stderr.slice(-500)})`)), REFUSAL_TIMEOUT_MS);
  });
  try {
    const status = await Promise.race([main(args, io), served]);
    return { status, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}
