import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openStore } from '../store/open-store.js';
import { STORED_ROW_CHECK } from '../store/stored-rows.js';
import { ACTION_NAMES } from '../protocol/action-table.js';
import { DEV_SECRET_FILE, isUsableSub } from './bearer-auth.js';
import { ConfigError } from '../config/config-error.js';
import { issueClaims, loadSigningKey, signCredential } from './credential-issuer.js';
import { keysDir, resolveDbPath } from '../config/data-dir.js';

export interface DevCredentialOptions {
  user: string;
  action: string;
  db?: string | undefined;
  env: NodeJS.ProcessEnv;
}

/**
 * `toolgate dev-credential`: a controlled credential for one user and one
 * action, signed with the data folder's credential key — what the daemon
 * hands a project-cli child, so project-cli can be tried by hand. Dev data
 * only: refused unless the data folder holds the dev secret (`serve --dev`,
 * `npm start` or `dev-token` made it) and no TOOLGATE_CREDENTIAL_KEY_FILE
 * names a real key. The key is recorded in the database, as `serve` does
 * (project-cli trusts only recorded keys), and the issuance is audited like
 * any other. The credential lives CREDENTIAL_LIFETIME_S and binds no call.
 */
export async function devCredential(opts: DevCredentialOptions): Promise<string> {
  const dir = keysDir(opts.env);
  if (opts.env.TOOLGATE_CREDENTIAL_KEY_FILE) {
    throw new ConfigError('dev-credential signs only with the dev data folder\'s key: unset TOOLGATE_CREDENTIAL_KEY_FILE (a real key signs credentials only inside the daemon)');
  }
  if (!existsSync(join(dir, DEV_SECRET_FILE))) {
    throw new ConfigError(`dev-credential works only on --dev data: ${dir} holds no dev secret — run toolgate serve --dev (or npm start) once first`);
  }
  if (!isUsableSub(opts.user)) throw new ConfigError('--user: a user id is printable text without surrounding spaces, at most 200 characters');
  if (!(ACTION_NAMES as readonly string[]).includes(opts.action)) {
    throw new ConfigError(`--action: unknown action ${JSON.stringify(opts.action)} — one of ${ACTION_NAMES.join(', ')}`);
  }
  const key = await loadSigningKey(opts.env, dir);
  const { claims, audit } = issueClaims({ userId: opts.user, actions: [opts.action], source: 'session', jobId: null, call: null });
  const store = await openStore(resolveDbPath(opts.db, opts.env), { checkRows: STORED_ROW_CHECK });
  try {
    await store.transaction(async (tx) => {
      await tx.credentialKeys.record(key.kid, key.publicJwk as Record<string, unknown>);
      await tx.credentialAudit.record(audit);
    });
  } finally {
    await store.close();
  }
  return signCredential(claims, key);
}
