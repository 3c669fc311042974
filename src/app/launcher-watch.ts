/**
 * A daemon started through npm (`npx toolgate serve`, an npm script) stops
 * when the npm process that launched it is gone. npm runs a bin through
 * `sh -c`; a SIGTERM sent to the npm process (a process manager, a test
 * harness, `docker stop` with npx as PID 1) ends npm and its shell, but npm
 * no longer passes the signal on (npm/run-script#142, npm/cli#6684), so the
 * daemon was left running with init as its parent, holding its port and
 * database. Its parent changing is the one trace that reaches it.
 *
 * Only under npm (`npm_command` in the environment, set by `npm exec` and
 * `npm run`): a daemon started by a shell, systemd or a container runtime is
 * left alone, so `toolgate serve &` outlives the terminal as before.
 */

/** How often the parent is read: cheap (one getppid), and a stop within a second is soon enough. */
export const LAUNCHER_POLL_MS = 500;

/**
 * Calls `gone` once when this process's parent changes, if npm launched it;
 * returns a function that stops watching. The timer never holds the process open.
 */
export function watchLauncher(env: NodeJS.ProcessEnv, gone: (launcher: { ppid: number; command: string }) => void): () => void {
  const command = env['npm_command'];
  if (!command || process.platform === 'win32') return () => {};
  const ppid = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === ppid) return;
    clearInterval(timer);
    gone({ ppid, command });
  }, LAUNCHER_POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
