import { newRowId } from '../ids.js';
import type { AutomationJob, AutomationJobsRepo, QuotaLimitsRow } from '../store.js';
import { nowIso, type Statements } from './statements.js';

export function sqliteAutomationJobs(st: Statements): AutomationJobsRepo {
  return {
    async create(job: Omit<AutomationJob, 'id'>) {
      const id = newRowId('job_');
      st.get('INSERT INTO automation_jobs (id, owner_id, enabled_skills, allowed_actions, created_at, quotas, approval) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
        id,
        job.ownerId,
        JSON.stringify(job.enabledSkills),
        JSON.stringify(job.allowedActions),
        nowIso(),
        JSON.stringify(job.quotas ?? {}),
        job.approval ? JSON.stringify(job.approval) : null,
      );
      return { id, ...job };
    },
    async get(id: string) {
      const row = st.get('SELECT id, owner_id, enabled_skills, allowed_actions, quotas, approval FROM automation_jobs WHERE id = ?').get(id) as
        | { id: string; owner_id: string; enabled_skills: string; allowed_actions: string; quotas: string; approval: string | null }
        | undefined;
      if (!row) return undefined;
      const quotas = JSON.parse(row.quotas) as Record<string, QuotaLimitsRow>;
      return {
        id: row.id,
        ownerId: row.owner_id,
        enabledSkills: JSON.parse(row.enabled_skills) as string[],
        allowedActions: JSON.parse(row.allowed_actions) as string[],
        ...(Object.keys(quotas).length > 0 ? { quotas } : {}),
        approval: row.approval === null ? null : (JSON.parse(row.approval) as AutomationJob['approval']),
      };
    },
  };
}
