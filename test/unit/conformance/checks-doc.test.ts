/**
 * docs/protocols/conformance.md lists every check of the runner, in order, with
 * the section it enforces (docs-links.test.ts then holds each section's anchor
 * to a real heading); and every check names a section.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHECKS } from '../../../src/conformance/checks.js';
import { REPO_ROOT } from '../../helpers/repo.js';

test('conformance.md lists every check, in order, with the section it enforces', () => {
  const page = readFileSync(join(REPO_ROOT, 'docs', 'protocols', 'conformance.md'), 'utf8');
  const rows = page.split('\n').filter((l) => /^\| \d+ \| /.test(l));
  const expected = CHECKS.map((c, i) => `| ${i + 1} | ${c.name.replace(/\|/g, '\\|')} | [${c.section}](${c.section}) |`);
  assert.deepEqual(rows, expected);
  for (const c of CHECKS) assert.match(c.section, /^[a-z-]+\.md(#[a-z0-9_-]+)?$/, c.name);
});
