/**
 * The skills travel: each folder is a valid Agent Skill (checked with the
 * `skills-ref` reference validator plus the spec rules it leaves out), it
 * refers to its own files by relative name rather than through a
 * toolgate-only method, every action it mentions exists, and every action
 * in the registry is taught by some skill.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { validate } from 'skills-ref';
import { ACTION_NAMES } from '../../../src/cli-router/registry.js';
import { REPO_ROOT } from '../../helpers/repo.js';

const SKILLS = join(REPO_ROOT, 'skills');
const skillNames = readdirSync(SKILLS, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
const filesOf = (skill: string) => readdirSync(join(SKILLS, skill)).filter((f) => f.endsWith('.md')).sort();
const read = (skill: string, file: string) => readFileSync(join(SKILLS, skill, file), 'utf8');
const MODULES = new Set(ACTION_NAMES.map((a) => a.split('.')[0]!));

/**
 * The actions a skill file names: calls written as JSON
 * (`"module": "calendar", "method": "read"`), backticked `module.method`
 * names of a known module, and method headings (`## read`, `## accept_invite /
 * reject_invite`, `## update: save or replace`) in the skill of that module.
 */
export function mentionedActions(skill: string, text: string): Set<string> {
  const found = new Set<string>();
  for (const m of text.matchAll(/"module"\s*:\s*"([^"]+)"\s*,\s*"method"\s*:\s*"([^"]+)"/g)) {
    // `"<method>"` and `"…"` are placeholders; `"<update|forget|read>"` names three methods.
    if (/^\w+$/.test(m[2]!)) found.add(`${m[1]}.${m[2]}`);
    else if (m[2]!.includes('|')) for (const method of m[2]!.slice(1, -1).split('|')) found.add(`${m[1]}.${method}`);
  }
  for (const m of text.matchAll(/`([a-z_]+)\.([a-z_]+)`/g)) if (MODULES.has(m[1]!)) found.add(`${m[1]}.${m[2]}`);
  if (MODULES.has(skill)) {
    for (const m of text.matchAll(/^## (.+)$/gm)) {
      const names = m[1]!.split(':')[0]!.split('/').map((s) => s.trim());
      if (names.every((n) => /^[a-z_]+$/.test(n))) for (const n of names) found.add(`${skill}.${n}`);
    }
  }
  return found;
}

test('the linter itself sees calls, backticked names and method headings', () => {
  const seen = mentionedActions('calendar', '## read\n## accept_invite / reject_invite\n`calendar.list` and {"module": "memory", "method": "<update|forget>"}\n## When to use it');
  assert.deepEqual([...seen].sort(), ['calendar.accept_invite', 'calendar.list', 'calendar.read', 'calendar.reject_invite', 'memory.forget', 'memory.update']);
});

test('every skill folder passes the skills-ref validator (Agent Skills spec)', async () => {
  assert.ok(skillNames.length >= 3);
  for (const skill of skillNames) assert.deepEqual(await validate(join(SKILLS, skill)), [], skill);
});

test('the spec rules skills-ref leaves out: name rules, a description saying what and when, a short body', () => {
  for (const skill of skillNames) {
    const text = read(skill, 'SKILL.md');
    const front = /^---\n([\s\S]*?)\n---\n/.exec(text);
    assert.ok(front, `${skill}: frontmatter first`);
    const name = /^name: (.*)$/m.exec(front[1]!)?.[1];
    assert.equal(name, skill, `${skill}: name matches the folder`);
    assert.match(name!, /^[a-z0-9]+(-[a-z0-9]+)*$/, `${skill}: lowercase letters, digits, single hyphens`);
    const description = /^description: (.*)$/m.exec(front[1]!)?.[1] ?? '';
    assert.ok(description.length > 0 && description.length <= 1024, `${skill}: description length`);
    assert.match(description, /\bUse when\b/, `${skill}: the description says when to use it`);
    assert.ok(text.split('\n').length < 500, `${skill}: SKILL.md under 500 lines`);
  }
});

test('skills are host-neutral: files are referred to by relative name, and every file is referred to', () => {
  for (const skill of skillNames) {
    const files = filesOf(skill);
    for (const file of files) {
      const text = read(skill, file);
      assert.doesNotMatch(text, /skills\/read|skills\/list|path:\s*"/, `${skill}/${file}: no toolgate-only way to read files`);
      for (const link of text.matchAll(/\]\(([^)]+)\)/g)) {
        const target = link[1]!;
        if (/^[a-z]+:/.test(target) || target.startsWith('#')) continue;
        assert.ok(!target.startsWith('/') && !target.includes('..'), `${skill}/${file}: ${target} stays in the folder`);
        assert.ok(files.includes(target), `${skill}/${file}: ${target} exists in the folder`);
      }
    }
    const main = read(skill, 'SKILL.md');
    for (const file of files.filter((f) => f !== 'SKILL.md')) {
      assert.ok(main.includes(`](${file})`), `${skill}/SKILL.md links ${file} by its file name`);
    }
  }
});

test('every action a skill mentions exists, and every action is taught by some skill', () => {
  const taught = new Set<string>();
  for (const skill of skillNames) {
    for (const file of filesOf(skill)) {
      for (const action of mentionedActions(skill, read(skill, file))) {
        assert.ok(ACTION_NAMES.includes(action), `${skill}/${file} mentions ${action}, which is not in the registry`);
        taught.add(action);
      }
    }
  }
  assert.deepEqual(ACTION_NAMES.filter((a) => !taught.has(a)), [], 'actions no skill teaches');
});
