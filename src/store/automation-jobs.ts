import { randomUUID } from 'node:crypto';
import type { Db } from './database.js';
import { nowIso } from './database.js';

export interface AutomationJob {
  id: string;
  ownerId: string;
  enabledSkills: string[];
  allowedActions: string[];
}

export function createAutomationJob(db: Db, job: Omit<AutomationJob, 'id'>): AutomationJob {
  const id = `job_${randomUUID()}`;
  db.prepare('INSERT INTO automation_jobs (id, owner_id, enabled_skills, allowed_actions, created_at) VALUES (?, ?, ?, ?, ?)').run(
    id,
    job.ownerId,
    JSON.stringify(job.enabledSkills),
    JSON.stringify(job.allowedActions),
    nowIso(),
  );
  return { id, ...job };
}

export function getAutomationJob(db: Db, id: string): AutomationJob | undefined {
  const row = db.prepare('SELECT id, owner_id, enabled_skills, allowed_actions FROM automation_jobs WHERE id = ?').get(id) as
    | { id: string; owner_id: string; enabled_skills: string; allowed_actions: string }
    | undefined;
  if (!row) return undefined;
  return {
    id: row.id,
    ownerId: row.owner_id,
    enabledSkills: JSON.parse(row.enabled_skills) as string[],
    allowedActions: JSON.parse(row.allowed_actions) as string[],
  };
}
