/**
 * Skills over MCP through the SDK's Skills extension (SEP-2640,
 * `io.modelcontextprotocol/skills`): `skills/list`, `skills/get` and the
 * `skill://<name>/<file>` resources (listed in `resources/list`, read with
 * `resources/read`). A session sees only its enabled skills: the catalog is
 * built over a view of the skills folder that holds nothing else, so a
 * disabled skill is neither listed nor readable — there is nothing to leak.
 */
import { SkillsExtension, type SkillCatalog, type SkillFiles } from '@modelcontextprotocol/server/ext/skills';
import { nodeSkillFiles } from '@modelcontextprotocol/server/ext/skills/node';
import { SKILLS_DIR } from '../runtime/package-root.js';
import type { Logger } from '../runtime/logger.js';
import type { Session } from '../sessions/sessions.js';

/** The skills folder as the catalog sees it: only the skill folders `names()` names now exist. */
function onlySkills(files: SkillFiles, names: () => readonly string[]): SkillFiles {
  const skillOf = (path: string) => path.split('/')[0] ?? '';
  return {
    async list(dir) {
      const allowed = new Set(names());
      if (dir === '') return (await files.list(dir)).filter((e) => e.kind === 'directory' && allowed.has(e.name));
      return allowed.has(skillOf(dir)) ? files.list(dir) : [];
    },
    async read(path) {
      if (!names().includes(skillOf(path))) throw new Error('no such skill file');
      return files.read(path);
    },
  };
}

/**
 * The catalogs MCP servers attach. A server built for one request (2026-07-28 over HTTP) shares the
 * catalog of its set of skills, loaded once (the folder ships with the package). A server that lives
 * on (stdio, a 2025-11-25 HTTP session) has one of its own that follows its session (`live`).
 */
export class SkillCatalogs {
  private readonly byKey = new Map<string, Promise<SkillCatalog>>();

  constructor(
    private readonly log: Logger,
    private readonly dir: string = SKILLS_DIR,
  ) {}

  for(enabled: readonly string[]): Promise<SkillCatalog> {
    const names = [...new Set(enabled)].sort();
    const key = names.join(',');
    let catalog = this.byKey.get(key);
    if (!catalog) {
      catalog = this.load(() => names);
      this.byKey.set(key, catalog);
      catalog.catch(() => this.byKey.delete(key));
    }
    return catalog;
  }

  /**
   * A catalog of the session's skills as they are at each read: a skill a configuration reload took
   * away is unreadable at once, and gone from the lists once the catalog's `reload()` has run (which
   * tells the client, `resources/list_changed`).
   */
  live(session: Pick<Session, 'enabledSkills'>): Promise<SkillCatalog> {
    return this.load(() => session.enabledSkills);
  }

  private load(names: () => readonly string[]): Promise<SkillCatalog> {
    return SkillsExtension.load(onlySkills(nodeSkillFiles(this.dir), names), {
      onWarning: (w) => this.log.log('warn', 'skill catalog', { path: w.path, problem: w.message }),
    });
  }
}

/** The `SKILL.md` resource of a skill, as the catalog names it. */
export function skillUri(name: string): string {
  return `skill://${name}/SKILL.md`;
}
