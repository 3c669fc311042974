/** The config of the approval tests (contract section 17): asking before the destructive actions. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './repo.js';

export const ASK = ['calendar.delete', 'calendar.share', 'memory.forget'];

/**
 * A config whose default profile asks before the destructive actions; `quick` lets a call wait one second.
 * `limits`: the config's `limits` object (e.g. short time limits), none by default.
 */
export function askConfig(limits?: Record<string, unknown>): string {
  const file = join(tempDir(), 'toolgate.config.json');
  const profile = { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.read', 'memory.*'] };
  writeFileSync(
    file,
    JSON.stringify({
      agents: { default: { ...profile, approval: { ask: ASK, ttl_s: 600 } }, quick: { ...profile, approval: { ask: ASK, ttl_s: 1 } } },
      ...(limits ? { limits } : {}),
    }),
  );
  return file;
}
