import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, found by walking up from the compiled test file. */
export const REPO_ROOT: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!(existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'tsconfig.json')))) dir = dirname(dir);
  return dir;
})();

export const TOOLGATE_BIN = join(REPO_ROOT, 'bin', 'toolgate.mjs');
export const PROJECT_CLI_BIN = join(REPO_ROOT, 'bin', 'project-cli.mjs');

/** A fresh temporary folder for one test's database and keys. */
export function tempDir(prefix = 'toolgate-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Where a test keeps a screenshot: docs/screenshots/ when UPDATE_SCREENSHOTS=1
 * (to refresh the committed ones), else a temporary folder, so a test run
 * never dirties the work tree.
 */
export function screenshotPath(name: string): string {
  const dir = process.env.UPDATE_SCREENSHOTS === '1' ? join(REPO_ROOT, 'docs', 'screenshots') : tempDir('toolgate-shots-');
  return join(dir, name);
}
