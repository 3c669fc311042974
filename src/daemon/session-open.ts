import type { z } from 'zod';
import type { SessionOpenParams } from '../rpc/methods.js';
import { invalidParams, unauthorized } from '../rpc/errors.js';
import { provisionUser } from '../store/users.js';
import { Unauthorized, verifyBearer } from './bearer-auth.js';
import type { Connection, Daemon } from './daemon.js';

export interface SessionOpenResult {
  session_id: string;
  user_id: string;
  enabled_skills: string[];
  allowed_actions: string[];
}

/**
 * `session/open`. The agent profile decides what the session may see and
 * run; the host may narrow the skills, never widen them. Automation
 * sessions are for trusted connections only.
 */
export async function openSession(daemon: Daemon, conn: Connection, p: z.infer<typeof SessionOpenParams>): Promise<SessionOpenResult> {
  const profileName = p.agent ?? 'default';
  const profile = daemon.config.agents.get(profileName);
  if (!profile) throw invalidParams(`unknown agent profile "${profileName}"`, { code: 'UNKNOWN_AGENT' });

  if (p.auth.type === 'automation') {
    if (!conn.trusted) throw unauthorized('automation sessions need a trusted connection');
    throw invalidParams('automation job not found', { code: 'JOB_NOT_FOUND' });
  }

  let identity;
  try {
    identity = await verifyBearer(p.auth.token, daemon.bearerKeys, daemon.env);
  } catch (err) {
    if (err instanceof Unauthorized) throw unauthorized(err.message);
    throw err;
  }
  const user = daemon.db.transaction(() => provisionUser(daemon.db, identity.userId, identity)).immediate();

  let skills = profile.enabledSkills;
  if (p.enabled_skills) {
    const outside = p.enabled_skills.filter((s) => !profile.enabledSkills.includes(s));
    if (outside.length > 0) throw invalidParams(`skills not enabled for agent "${profileName}": ${outside.join(', ')}`, { code: 'SKILL_NOT_ENABLED' });
    skills = profile.enabledSkills.filter((s) => p.enabled_skills!.includes(s));
  }
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
