/**
 * The secrets a command line can know without building a daemon (contract
 * section 5): the bearer secret and service key of the environment, the
 * private part of the credential signing key TOOLGATE_CREDENTIAL_KEY_FILE
 * names, and the dev bearer secret and signing key kept in the data folder
 * (TOOLGATE_HOME). Read, never created: a command that only
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

/** The cap `serve` puts on TOOLGATE_CREDENTIAL_KEY_FILE (1 MiB): a bigger file is no key of ours (and not read). */
const MAX_KEY_FILE_BYTES = 1024 * 1024;

/**
 * The configured secrets `env` names or the data folder holds, as text to
 * refuse or mask verbatim. Never throws: a data folder that cannot be found
 * or read contributes nothing.
 */
export function localSecrets(env: NodeJS.ProcessEnv): string[] {
  const out = new Set<string>();
  if (env.TOOLGATE_BEARER_SECRET) out.add(env.TOOLGATE_BEARER_SECRET);
  if (env.TOOLGATE_SERVICE_KEY) out.add(env.TOOLGATE_SERVICE_KEY);
  // The daemon signs with this file's key when it is set (credential-issuer.ts), the data folder's otherwise.
  if (env.TOOLGATE_CREDENTIAL_KEY_FILE) addPrivatePart(out, readSmallFile(env.TOOLGATE_CREDENTIAL_KEY_FILE));
  let dir: string | null;
  try {
    dir = keysDir(env);
  } catch {
    dir = null; // no home folder: no data folder to hold a secret
  }
  if (dir !== null) {
    const dev = readSmallFile(join(dir, DEV_SECRET_FILE))?.trim();
    if (dev) out.add(dev);
    addPrivatePart(out, readSmallFile(join(dir, SIGNING_KEY_FILE)));
  }
  out.delete('');
  return [...out];
}

/** A JWK's private part (`d`), if `jwk` is one. */
function addPrivatePart(out: Set<string>, jwk: string | null): void {
  if (!jwk) return;
  try {
    const d = (JSON.parse(jwk) as { d?: unknown }).d;
    if (typeof d === 'string') out.add(d);
  } catch {
    // not JWK JSON: the daemon reports that when it loads the key
  }
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
