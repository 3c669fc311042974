import { readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, relative, resolve, sep, isAbsolute } from 'node:path';
import { DaemonError } from '../runtime/errors.js';
import { SKILLS_DIR } from '../runtime/package-root.js';
import type { Session } from './sessions.js';
import type { SkillSummary } from '../protocol/methods.js';

export type { SkillSummary };

/** Skill folders that hold a SKILL.md. */
export function discoverSkills(dir: string = SKILLS_DIR): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && statSafe(join(dir, d.name, 'SKILL.md')))
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
}

function statSafe(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The frontmatter `description:` of a SKILL.md (first level, one line). */
function skillDescription(text: string): string {
  const front = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text)?.[1] ?? '';
  const line = /^description:\s*(.*)$/m.exec(front)?.[1] ?? '';
  return line.trim().replace(/^["']|["']$/g, '');
}

/** `skills/list`: the session's enabled skills only — seeing a skill never grants an action. */
export function listSkills(session: Session): { skills: SkillSummary[] } {
  return {
    skills: session.enabledSkills.map((name) => ({
      name,
      description: skillDescription(readFileSync(join(SKILLS_DIR, name, 'SKILL.md'), 'utf8')),
    })),
  };
}

/**
 * `skills/read`: SKILL.md, or a file inside the skill's folder. Paths are
 * resolved (symlinks included) and must stay inside the folder.
 */
export function readSkill(session: Session, name: string, path: string | undefined): { name: string; path: string; content: string } {
  if (!session.enabledSkills.includes(name)) throw new DaemonError('SKILL_NOT_FOUND', 'skill not found');
  const folder = realpathSync(join(SKILLS_DIR, name));
  const wanted = path ?? 'SKILL.md';
  const notFound = () => new DaemonError('SKILL_FILE_NOT_FOUND', 'skill file not found');
  if (isAbsolute(wanted) || wanted.includes('\0')) throw notFound();
  let real: string;
  try {
    real = realpathSync(resolve(folder, wanted));
  } catch {
    throw notFound();
  }
  const rel = relative(folder, real);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel) || !statSafe(real)) throw notFound();
  return { name, path: rel.split(sep).join('/'), content: readFileSync(real, 'utf8') };
}
