import { openStore } from '../store/open-store.js';
import { STORED_ROW_CHECK } from '../store/stored-rows.js';
import { ConfigError } from '../config/config-error.js';
import { compileQuotas, expandActions } from '../config/config.js';
import { describeConfigIssues, protoKeyPath } from '../config/config-file.js';
import { QuotasConfig } from '../protocol/config.js';
import type { QuotaLimitsRow } from '../store/store.js';
import { resolveDbPath } from '../config/data-dir.js';
import { discoverSkills } from './skills.js';
import { isUsableSub } from '../auth/bearer-auth.js';
import { MAX_APPROVAL_TTL_S } from '../protocol/config.js';
import { findSecretIn } from '../codec/secret-scan.js';
import { localSecrets } from '../auth/local-secrets.js';

export interface AddJobOptions {
  owner: string;
  skills: string[];
  allow: string[];
  /** `--quota`: JSON text of `{"<pattern>": {per_minute?, per_hour?, per_day?}}`, as a profile's `quotas`. */
  quota?: string | undefined;
  /** Actions that wait for a person's approval (contract section 17). */
  ask?: string[];
  /** `--ask-ttl-s`, as typed. */
  askTtlS?: string;
  db?: string | undefined;
  env: NodeJS.ProcessEnv;
}

/**
 * `automation add`: a job runs as its owner with exactly these skills and
 * actions (wildcards expanded now, so the job never widens later). The owner
 * is provisioned if the daemon has not seen them yet.
 */
export async function addAutomationJob(opts: AddJobOptions): Promise<{ job_id: string }> {
  // Contract sections 5 and 7: a token or configured secret in a flag is refused before any check could echo
  // it (an unknown action or skill is named in the error) and before the owner is stored as a user id. The
  // secrets are the environment's and the data folder's (the dev bearer secret, the signing key's private part).
  const secrets = localSecrets(opts.env);
  const flags: Array<[string, unknown]> = [['--owner', opts.owner], ['--skills', opts.skills], ['--allow', opts.allow], ['--ask', opts.ask], ['--quota', opts.quota]];
  for (const [flag, value] of flags) {
    if (value !== undefined && findSecretIn(value, secrets) !== null) {
      throw new ConfigError(`${flag} carries a bearer token or credential; such text is refused and nothing was stored`);
    }
  }
  // The owner is a user id as a bearer token's `sub` names one (section 13): a job for any other id acts for nobody.
  if (!isUsableSub(opts.owner)) throw new ConfigError('--owner: a user id is printable text without surrounding spaces, at most 200 characters');
  const known = discoverSkills();
  const unknown = opts.skills.filter((s) => !known.includes(s));
  if (unknown.length > 0) throw new ConfigError(`unknown skill(s): ${unknown.join(', ')} (known: ${known.join(', ')})`);
  if (opts.allow.length === 0) throw new ConfigError('--allow needs at least one action');
  const actions = expandActions(opts.allow, '--allow');
  const quotas = opts.quota === undefined ? undefined : parseQuotas(opts.quota);
  const ask = opts.ask?.length ? expandActions(opts.ask, '--ask') : [];
  let ttlS: number | undefined;
  if (opts.askTtlS !== undefined) {
    ttlS = Number(opts.askTtlS);
    if (!/^\d+$/.test(opts.askTtlS) || ttlS < 1 || ttlS > MAX_APPROVAL_TTL_S) throw new ConfigError(`--ask-ttl-s: must be a whole number of seconds from 1 to ${MAX_APPROVAL_TTL_S}`);
  }
  const approval = ask.length > 0 ? { ask, ...(ttlS ? { ttl_s: ttlS } : {}) } : null;
  const store = await openStore(resolveDbPath(opts.db, opts.env), { checkRows: STORED_ROW_CHECK });
  try {
    const job = await store.transaction(async (tx) => {
      await tx.users.ensure(opts.owner);
      return tx.automationJobs.create({ ownerId: opts.owner, enabledSkills: [...new Set(opts.skills)], allowedActions: actions, ...(quotas ? { quotas } : {}), approval });
    });
    return { job_id: job.id };
  } finally {
    await store.close();
  }
}

/** `--quota`: validated by the config's own schema, each pattern checked against the action table. */
function parseQuotas(text: string): Record<string, QuotaLimitsRow> | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ConfigError('--quota: not valid JSON (e.g. {"calendar.create":{"per_minute":5}})');
  }
  const proto = protoKeyPath(raw);
  if (proto !== null) throw new ConfigError(`--quota: unknown key ${proto}`);
  const parsed = QuotasConfig.safeParse(raw);
  if (!parsed.success) throw new ConfigError(`--quota: ${describeConfigIssues(parsed.error.issues)}`);
  compileQuotas(parsed.data, '--quota');
  return Object.keys(parsed.data).length > 0 ? parsed.data : undefined;
}
