import type { z } from 'zod';
import type { SessionOpenParams } from '../rpc/methods.js';
import { invalidParams, unauthorized } from '../rpc/errors.js';
import { Unauthorized, verifyBearer } from './bearer-auth.js';
import type { Connection, Daemon } from './daemon.js';
import type { SessionOpenResult } from '../protocol/methods.js';

export type { SessionOpenResult };

/**
 * `session/open`. The agent profile decides what the session may see and
 * run; the host may narrow the skills, never widen them. Automation
 * sessions are for trusted connections only.
 */
export async function openSession(daemon: Daemon, conn: Connection, p: z.infer<typeof SessionOpenParams>): Promise<SessionOpenResult> {
  if (p.auth.type === 'automation') {
    // A job carries its own skills and whitelist: no agent profile takes part.
    if (!conn.trusted) throw unauthorized('automation sessions need a trusted connection');
    const jobId = p.auth.job_id;
    const job = await daemon.store.read((tx) => tx.automationJobs.get(jobId));
    if (!job) throw invalidParams('automation job not found', { code: 'JOB_NOT_FOUND' });
    const skills = narrowSkills(job.enabledSkills, p.enabled_skills, `job ${job.id}`);
    const session = daemon.sessions.open({
      userId: job.ownerId,
      connectionId: conn.id,
      source: 'automation',
      jobId: job.id,
      enabledSkills: skills,
      allowedActions: job.allowedActions,
    });
    daemon.log.log('info', 'automation session opened', { session_id: session.id, user_id: job.ownerId, job_id: job.id, connection: conn.id });
    return { session_id: session.id, user_id: job.ownerId, enabled_skills: skills, allowed_actions: job.allowedActions };
  }

  const profileName = p.agent ?? 'default';
  const profile = daemon.config.agents.get(profileName);
  if (!profile) throw invalidParams(`unknown agent profile "${profileName}"`, { code: 'UNKNOWN_AGENT' });

  let identity;
  try {
    identity = await verifyBearer(p.auth.token, daemon.bearerKeys, daemon.env, { maxLifetimeS: daemon.config.auth?.maxTokenLifetimeS });
  } catch (err) {
    if (err instanceof Unauthorized) throw unauthorized(err.message);
    throw err;
  }
  const user = await daemon.store.transaction((tx) => tx.users.provision(identity.userId, identity));

  const skills = narrowSkills(profile.enabledSkills, p.enabled_skills, `agent "${profileName}"`);
  const session = daemon.sessions.open({
    userId: user.id,
    connectionId: conn.id,
    source: 'session',
    jobId: null,
    enabledSkills: skills,
    allowedActions: profile.allowedActions,
  });
  daemon.log.log('info', 'session opened', { session_id: session.id, user_id: user.id, agent: profileName, connection: conn.id });
  return { session_id: session.id, user_id: user.id, enabled_skills: skills, allowed_actions: session.allowedActions };
}

/** A host may narrow the visible skills, never widen them. */
function narrowSkills(allowed: string[], requested: string[] | undefined, owner: string): string[] {
  if (!requested) return allowed;
  const outside = requested.filter((s) => !allowed.includes(s));
  if (outside.length > 0) throw invalidParams(`skills not enabled for ${owner}: ${outside.join(', ')}`, { code: 'SKILL_NOT_ENABLED' });
  return allowed.filter((s) => requested.includes(s));
}
