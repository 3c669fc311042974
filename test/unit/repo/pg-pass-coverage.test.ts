/**
 * A test that runs only on PostgreSQL (`needsPg`: skipped without TOOLGATE_TEST_PG_URL) runs in the
 * PostgreSQL pass: its file is one of scripts/test-files.mjs's PG_SUITES or OWN_CLUSTER_SUITES. The SQLite
 * pass runs without the URL, so a file in neither list would have its PostgreSQL tests skipped in every
 * run — as four were until 2026-12-08 (approval across two daemons, its fan-out, quota races, the byte
 * budget), reported `ok … # SKIP` and never run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../../helpers/repo.js';

/** An import of `needsPg` from the PostgreSQL test helper (test/helpers/pg.ts). */
const USES_NEEDS_PG = /import\s*\{[^}]*\bneedsPg\b[^}]*\}\s*from\s*['"][^'"]*helpers\/pg\.js['"]/;

test('every test file with PostgreSQL-only tests is in the PostgreSQL pass', async () => {
  const lists = (await import(pathToFileURL(join(REPO_ROOT, 'scripts', 'test-files.mjs')).href)) as { PG_SUITES: string[]; OWN_CLUSTER_SUITES: string[] };
  const inPass = new Set([...lists.PG_SUITES, ...lists.OWN_CLUSTER_SUITES].map((f) => f.replace(join(REPO_ROOT, 'dist', 'test') + sep, '').replace(/\.test\.js$/, '')));
  const pgOnly = readdirSync(join(REPO_ROOT, 'test'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .filter((f) => USES_NEEDS_PG.test(readFileSync(join(REPO_ROOT, 'test', f), 'utf8')))
    .map((f) => f.replace(/\.test\.ts$/, '').split(sep).join('/'));
  assert.ok(pgOnly.length > 10, `found ${pgOnly.length} files using needsPg: the scan is broken`);
  const missing = pgOnly.filter((f) => !inPass.has(f));
  assert.deepEqual(missing, [], 'test files with PostgreSQL-only tests that no pass runs on PostgreSQL (add them to PG_SUITES)');
});
