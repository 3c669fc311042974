/**
 * The secrets a command line can know without building a daemon (contract
 * section 5): the bearer secret and service key of the environment, and the
 * dev bearer secret and the credential signing key's private part kept in the
 * data folder (TOOLGATE_HOME). Read, never created: a command that only
 * checks or echoes text must not make a secret appear. Small on purpose (no
 * jose, no store): the `toolgate` command line imports it at the top.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { keysDir } from '../config/data-dir.js';

/** The dev bearer secret's file in the data folder (bearer-auth.ts creates it for `--dev` and dev-token). */
export const DEV_SECRET_FILE = 'dev-bearer-secret';
/** The credential signing key's file in the data folder (credential-issuer.ts creates it). */
export const SIGNING_KEY_FILE = 'credential-signing-key.jwk';

/** Larger than any key file toolgate writes: a bigger file is no secret of ours (and not read). */
const MAX_KEY_FILE_BYTES = 64 * 1024;

/**
 * The configured secrets `env` names or the data folder holds, as text to
 * refuse or mask verbatim. Never throws: a data folder that cannot be found
 * or read contributes nothing.
 */
export function localSecrets(env: NodeJS.ProcessEnv): string[] {
  const out = new Set<string>();
  if (env.TOOLGATE_BEARER_SECRET) out.add(env.TOOLGATE_BEARER_SECRET);
  if (env.TOOLGATE_SERVICE_KEY) out.add(env.TOOLGATE_SERVICE_KEY);
  let dir: string | null;
  try {
    dir = keysDir(env);
  } catch {
    dir = null; // no home folder: no data folder to hold a secret
  }
  if (dir !== null) {
    const dev = readSmallFile(join(dir, DEV_SECRET_FILE))?.trim();
    if (dev) out.add(dev);
    const jwk = readSmallFile(join(dir, SIGNING_KEY_FILE));
    if (jwk) {
      try {
        const d = (JSON.parse(jwk) as { d?: unknown }).d;
        if (typeof d === 'string') out.add(d);
      } catch {
        // not JWK JSON: the daemon reports that when it loads the key
      }
    }
  }
  out.delete('');
  return [...out];
}

function readSmallFile(path: string): string | null {
  try {
    const st = statSync(path);
    if (!st.isFile() || st.size > MAX_KEY_FILE_BYTES) return null;
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
