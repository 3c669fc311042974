import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository/package root (where package.json, skills/ and bin/ live), found from this file. */
export const PACKAGE_ROOT: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package root not found');
    dir = parent;
  }
  return dir;
})();

export const SKILLS_DIR = join(PACKAGE_ROOT, 'skills');
export const PROJECT_CLI_BIN = join(PACKAGE_ROOT, 'bin', 'project-cli.mjs');
/** What the subprocess executor starts from the bundle: the launcher bin/project-cli.mjs imports, as CommonJS (no ESM loader at start). */
export const PROJECT_CLI_LAUNCHER = join(PACKAGE_ROOT, 'bin', 'project-cli.cjs');
/** The bundle bin/project-cli.cjs runs, and the V8 start-up snapshot of it (scripts/bundle-cli.mjs). */
export const PROJECT_CLI_BUNDLE = join(PACKAGE_ROOT, 'dist', 'project-cli.bundle.cjs');
export const PROJECT_CLI_SNAPSHOT = join(PACKAGE_ROOT, 'dist', 'project-cli.snapshot.blob');
