import { openDatabase } from '../store/database.js';
import { createAutomationJob } from '../store/automation-jobs.js';
import { ensureUser } from '../store/users.js';
import { ConfigError } from './bearer-auth.js';
import { expandActions } from './config.js';
import { resolveDbPath } from './data-dir.js';
import { discoverSkills } from './skills.js';

export interface AddJobOptions {
  owner: string;
  skills: string[];
  allow: string[];
  db?: string | undefined;
  env: NodeJS.ProcessEnv;
}

/**
 * `automation add`: a job runs as its owner with exactly these skills and
 * actions (wildcards expanded now, so the job never widens later). The owner
 * is provisioned if the daemon has not seen them yet.
 */
export function addAutomationJob(opts: AddJobOptions): { job_id: string } {
  const known = discoverSkills();
  const unknown = opts.skills.filter((s) => !known.includes(s));
  if (unknown.length > 0) throw new ConfigError(`unknown skill(s): ${unknown.join(', ')} (known: ${known.join(', ')})`);
  if (opts.allow.length === 0) throw new ConfigError('--allow needs at least one action');
  const actions = expandActions(opts.allow, '--allow');
  const db = openDatabase(resolveDbPath(opts.db, opts.env));
  try {
    const job = db
      .transaction(() => {
        ensureUser(db, opts.owner);
        return createAutomationJob(db, { ownerId: opts.owner, enabledSkills: [...new Set(opts.skills)], allowedActions: actions });
      })
      .immediate();
    return { job_id: job.id };
  } finally {
    db.close();
  }
}
