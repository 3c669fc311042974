import type { z } from 'zod';
import type { SessionOpenParams } from '../protocol/methods.js';
import { DaemonError } from '../runtime/errors.js';
import { approvalPolicy } from '../config/config.js';
import { AuthError, authenticateUser, type UserAuthDeps } from '../auth/user-auth.js';
import type { Store } from '../store/store.js';
import type { Logger } from '../runtime/logger.js';
import type { Peer } from '../runtime/peer.js';
import type { SessionOpenResult } from '../protocol/methods.js';
import { compileQuotas, type AgentProfile, type DaemonConfig } from '../config/config.js';
import type { Session, SessionRegistry } from './sessions.js';

export type { SessionOpenResult };

/** What `session/open` needs: the token's verification, the profiles, the registry and the automation jobs. */
export interface SessionOpenDeps extends UserAuthDeps {
  store: Store;
  log: Logger;
  config: DaemonConfig;
  sessions: SessionRegistry;
}

/**
 * `session/open`. The agent profile decides what the session may see and
 * run; the host may narrow the skills, never widen them. Automation
 * sessions are for trusted connections only. The connection's session cap
 * is reserved before anything is awaited, so concurrent opens cannot pass
 * it together, and so is its place among the user's connections (checked
 * synchronously once the token names the user); a bearer session ends at
 * its token's `exp`.
 */
export async function openSession(deps: SessionOpenDeps, conn: Peer, p: z.infer<typeof SessionOpenParams>): Promise<SessionOpenResult> {
  if (p.auth.type === 'automation') {
    // A job carries its own skills and whitelist: no agent profile takes part.
    if (!conn.trusted) throw new DaemonError('UNAUTHORIZED', 'automation sessions need a trusted connection');
    const jobId = p.auth.job_id;
    const job = await deps.store.read((tx) => tx.automationJobs.get(jobId));
    if (!job) throw new DaemonError('JOB_NOT_FOUND', 'automation job not found');
    const skills = narrowSkills(job.enabledSkills, p.enabled_skills, `job ${job.id}`);
    const session = deps.sessions.open({
      userId: job.ownerId,
      connectionId: conn.id,
      source: 'automation',
      jobId: job.id,
      enabledSkills: skills,
      allowedActions: job.allowedActions,
      approval: approvalPolicy(job.approval, `job ${job.id} approval`),
      expiresAt: null,
      ...(job.quotas ? { quotas: { owner: `job:${job.id}`, quotas: compileQuotas(job.quotas, `job ${job.id}: quotas`) } } : {}),
    });
    deps.log.log('info', 'automation session opened', { session_id: session.id, user_id: job.ownerId, job_id: job.id, connection: conn.id });
    return { session_id: session.id, user_id: job.ownerId, enabled_skills: skills, allowed_actions: job.allowedActions };
  }

  const profileName = p.agent ?? 'default';
  const profile = deps.config.agents.get(profileName);
  if (!profile) throw new DaemonError('UNKNOWN_AGENT', `unknown agent profile "${profileName}"`);

  const slot = deps.sessions.reserve(conn.id, undefined, { perUserConnection: true });
  let session, skills;
  try {
    const principal = await authenticateUser(deps, { token: p.auth.token }, { provision: 'always' });
    skills = narrowSkills(profile.enabledSkills, p.enabled_skills, `agent "${profileName}"`);
    session = slot.open({
      userId: principal.userId,
      source: 'session',
      jobId: null,
      enabledSkills: skills,
      allowedActions: profile.allowedActions,
      expiresAt: principal.expiresAt,
      ...profileFields(profileName, profile, p.enabled_skills),
    });
  } catch (err) {
    slot.release();
    if (err instanceof AuthError && err.reason === 'unavailable') throw new DaemonError('UNAVAILABLE', `${err.message}: retry the request`);
    if (err instanceof AuthError) throw new DaemonError('UNAUTHORIZED', err.message);
    throw err;
  }
  deps.log.log('info', 'session opened', { session_id: session.id, user_id: session.userId, agent: profileName, connection: conn.id });
  return { session_id: session.id, user_id: session.userId, enabled_skills: skills, allowed_actions: session.allowedActions };
}

/** What ties a session to its profile, so a reload gives it the profile's new lists (config-reload.ts). */
export function profileFields(name: string, profile: AgentProfile, requestedSkills?: readonly string[]): Pick<Session, 'agent' | 'requestedSkills' | 'quotas' | 'approval'> {
  return {
    agent: name,
    approval: profile.approval,
    ...(requestedSkills ? { requestedSkills: [...requestedSkills] } : {}),
    ...(profile.quotas.length > 0 ? { quotas: { owner: `agent:${name}`, quotas: profile.quotas } } : {}),
  };
}

/** A host may narrow the visible skills, never widen them. */
function narrowSkills(allowed: string[], requested: string[] | undefined, owner: string): string[] {
  if (!requested) return allowed;
  const outside = requested.filter((s) => !allowed.includes(s));
  if (outside.length > 0) throw new DaemonError('SKILL_NOT_ENABLED', `skills not enabled for ${owner}: ${outside.join(', ')}`);
  return allowed.filter((s) => requested.includes(s));
}
