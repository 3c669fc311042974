/**
 * The line `toolgate` writes on stderr when a command fails in a way no usage
 * line covers (bin/toolgate.mjs): a JSON log line, redacted like every other —
 * tokens, a database URL's password, and the configured secrets the command
 * line knows (auth/local-secrets.ts), since the error's text may repeat what
 * the user typed (contract section 5).
 */
import { localSecrets } from '../auth/local-secrets.js';
import { redact } from '../codec/redact.js';

/** The crash line for `err` (without its newline); `env` names the configured secrets. */
export function crashLine(err: unknown, env: NodeJS.ProcessEnv = process.env): string {
  return JSON.stringify({ level: 'error', msg: 'toolgate crashed', err: redact(crashText(err), 0, localSecrets(env)) });
}

/** The error's stack, else its text; a thrown value that cannot be made a string (no prototype) is named by its type. */
function crashText(err: unknown): string {
  if (err instanceof Error && err.stack) return err.stack;
  try {
    return typeof err === 'object' && err !== null && !(err instanceof Error) ? JSON.stringify(err) ?? String(err) : String(err);
  } catch {
    return `a thrown ${typeof err} that has no text`;
  }
}
