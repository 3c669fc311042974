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
  const text = err instanceof Error && err.stack ? err.stack : String(err);
  return JSON.stringify({ level: 'error', msg: 'toolgate crashed', err: redact(text, 0, localSecrets(env)) });
}
