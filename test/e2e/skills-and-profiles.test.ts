/**
 * Skills are disclosed progressively and never grant an action; agent
 * profiles set visibility and the whitelist independently.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import type { ResponseError } from 'vscode-jsonrpc/node';
import { openSession } from '../helpers/host.js';
import { startInProcess } from '../helpers/in-process.js';
import { mintBearer, TEST_BEARER_SECRET } from '../helpers/tokens.js';
import { TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { toolgateMain } from '../helpers/toolgate-main.js';

const CONFIG = {
  agents: {
    default: { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.read', 'memory.*'] },
    reader: { enabled_skills: ['calendar', 'memory'], allowed_actions: ['calendar.read'] },
  },
};

const rpcError = (p: Promise<unknown>) => p.then(() => assert.fail('expected an error'), (e: ResponseError<unknown>) => e);

test('skills/list and skills/read show the enabled skills only, and paths stay inside the skill', async () => {
  const host = await startInProcess({ executor: 'subprocess' });
  try {
    const s = await openSession(host, await mintBearer('alice'), { enabled_skills: ['calendar', 'memory'] });
    assert.deepEqual(s.enabled_skills, ['calendar', 'memory']);
    const list = await host.request<{ skills: Array<{ name: string; description: string }> }>('skills/list', { session_id: s.session_id });
    assert.deepEqual(list.skills.map((k) => k.name), ['calendar', 'memory']);
    for (const k of list.skills) assert.ok(k.description.length > 10, 'descriptions come from the frontmatter');

    const skill = await host.request<{ name: string; path: string; content: string }>('skills/read', { session_id: s.session_id, name: 'calendar' });
    assert.equal(skill.path, 'SKILL.md');
    assert.match(skill.content, /^---\nname: calendar\n/);
    const examples = await host.request<{ path: string; content: string }>('skills/read', { session_id: s.session_id, name: 'calendar', path: 'examples.md' });
    assert.equal(examples.path, 'examples.md');

    for (const params of [
      { name: 'contacts' },
      { name: 'astrology' },
      { name: 'calendar', path: '../contacts/SKILL.md' },
      { name: 'calendar', path: '/etc/passwd' },
      { name: 'calendar', path: '../../package.json' },
      { name: 'calendar', path: 'missing.md' },
    ]) {
      const err = await rpcError(host.request('skills/read', { session_id: s.session_id, ...params }));
      assert.equal(err.code, -32602, JSON.stringify(params));
    }
    const widen = await rpcError(host.request('session/open', { auth: { type: 'bearer', token: await mintBearer('alice') }, enabled_skills: ['astrology'] }));
    assert.equal(widen.code, -32602);
  } finally {
    await host.stop();
  }
});

test('a profile that sees a skill but is not allowed its actions cannot run them', async () => {
  const dir = tempDir();
  const configPath = join(dir, 'config.json');
  writeFileSync(configPath, JSON.stringify(CONFIG));
  const host = await startInProcess({ executor: 'subprocess', dataDir: dir, args: ['--config', configPath] });
  try {
    const s = await openSession(host, await mintBearer('alice'), { agent: 'reader' });
    assert.deepEqual(s.allowed_actions, ['calendar.read']);
    assert.deepEqual(s.enabled_skills, ['calendar', 'memory']);
    const created = await host.request<{ status: string; content: Array<{ text: string }> }>('tool/invoke', {
      session_id: s.session_id, thread_id: 't', tool_call_id: 'c1',
      args: { module: 'calendar', method: 'create', input: { title: 'x', start_at: '2026-01-01T00:00:00Z', end_at: '2026-01-01T01:00:00Z' } },
    });
    assert.equal(created.status, 'failure');
    assert.equal(JSON.parse(created.content[0]!.text).error.code, 'ACTION_NOT_ALLOWED');
    const memory = await host.request<{ content: Array<{ text: string }> }>('tool/invoke', {
      session_id: s.session_id, thread_id: 't', tool_call_id: 'c2', args: { module: 'memory', method: 'read', input: {} },
    });
    assert.equal(JSON.parse(memory.content[0]!.text).error.code, 'ACTION_NOT_ALLOWED', 'seeing the memory skill grants nothing');
    const read = await host.request<{ status: string }>('tool/invoke', {
      session_id: s.session_id, thread_id: 't', tool_call_id: 'c3', args: { module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-01-01' } },
    });
    assert.equal(read.status, 'success');
    const unknown = await rpcError(host.request('session/open', { auth: { type: 'bearer', token: await mintBearer('alice') }, agent: 'admin' }));
    assert.equal(unknown.code, -32602);
  } finally {
    await host.stop();
  }
});

test('a bad config file or a missing bearer secret stops serve with a clear message and exit 2', async () => {
  const dir = tempDir();
  const cases: Array<[string, unknown, RegExp]> = [
    ['bad.json', '{ not json', /not valid JSON/],
    ['unknown-action.json', { agents: { default: { enabled_skills: [], allowed_actions: ['calendar.fly'] } } }, /calendar\.fly/],
    ['unknown-skill.json', { agents: { default: { enabled_skills: ['astrology'], allowed_actions: ['calendar.read'] } } }, /astrology/],
    ['extra-key.json', { agents: { default: { enabled_skills: [], allowed_actions: ['calendar.read'], admin: true } } }, /admin/],
  ];
  for (const [i, [name, body, message]] of cases.entries()) {
    const path = join(dir, name);
    writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body));
    const args = ['serve', '--stdio', '--db', join(dir, 'x.db'), '--config', path];
    const env = { PATH: process.env.PATH ?? '', TOOLGATE_HOME: tempDir(), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET };
    // The first through the binary, the others through its entry in this process (test/helpers/toolgate-main.ts).
    const r = i === 0 ? spawnSync(process.execPath, [TOOLGATE_BIN, ...args], { env, input: '', encoding: 'utf8' }) : await toolgateMain(args, env);
    assert.equal(r.status, 2, `${name}: ${r.stderr}`);
    assert.match(r.stderr, message);
    // The process's stdout (serve in process would write to the test runner's, not to the run's): spawned only.
    if (i === 0) assert.equal(r.stdout, '', 'stdout stays protocol-only');
  }
  const noSecret = spawnSync(process.execPath, [TOOLGATE_BIN, 'serve', '--stdio', '--db', join(dir, 'y.db')], {
    env: { PATH: process.env.PATH ?? '' }, input: '', encoding: 'utf8',
  });
  assert.equal(noSecret.status, 2);
  assert.match(noSecret.stderr, /TOOLGATE_BEARER_SECRET/);
  assert.match(noSecret.stderr, /--dev/);
});

test('a config error naming a value or key that is a token or configured secret masks it, JSON and YAML alike', async () => {
  // Contract section 5: the one line a bad --config prints never carries a token or the bearer secret.
  const dir = tempDir();
  const token = `x${await mintBearer('alice')}`;
  const home = tempDir();
  const devSecret = 'dev-secret-in-the-data-folder-0123456789';
  writeFileSync(join(home, 'dev-bearer-secret'), `${devSecret}\n`, { mode: 0o600 });
  const profile = (p: Record<string, unknown>) => ({ agents: { default: { enabled_skills: ['calendar'], allowed_actions: ['calendar.*'], ...p } } });
  const withSecret = (secret: string): Array<[string, string]> => [
    ['actions.json', JSON.stringify(profile({ allowed_actions: [secret] }))],
    ['skills.json', JSON.stringify(profile({ enabled_skills: [secret] }))],
    ['ask.json', JSON.stringify(profile({ approval: { ask: [secret] } }))],
    ['quota.json', JSON.stringify(profile({ quotas: { [secret]: { per_minute: 1 } } }))],
    ['timeout.json', JSON.stringify({ ...profile({}), limits: { action_timeout_ms: { [secret]: 5 } } })],
    ['root-key.json', JSON.stringify({ ...profile({}), [secret]: 1 })],
    ['profile-key.json', JSON.stringify({ agents: { [secret]: { enabled_skills: [], allowed_actions: ['nope.x'] } } })],
    ['mcp-agent.json', JSON.stringify({ ...profile({}), mcp: { agent: secret } })],
    ['syntax.json', `{"agents": {"default": {"enabled_skills": [], "allowed_actions": [${secret}]}}}`],
    ['actions.yaml', `agents:\n  default:\n    enabled_skills: [calendar]\n    allowed_actions: ["${secret}"]\n`],
    ['root-key.yaml', `agents:\n  default:\n    enabled_skills: [calendar]\n    allowed_actions: [calendar.*]\n${secret}: 1\n`],
  ];
  const sources: Array<[string, string, NodeJS.ProcessEnv, string[]]> = [
    ['token', token, { TOOLGATE_HOME: tempDir(), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET }, []],
    ['env secret', TEST_BEARER_SECRET, { TOOLGATE_HOME: tempDir(), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET }, []],
    ['dev secret', devSecret, { TOOLGATE_HOME: home }, ['--dev']],
  ];
  for (const [i, [source, secret, env, flags]] of sources.entries()) {
    const marks = source === 'token' ? [token.split('.')[1]!.slice(0, 16), token.split('.')[2]!.slice(0, 16)] : [secret.slice(0, 10)];
    for (const [j, [name, text]] of withSecret(secret).entries()) {
      const path = join(dir, `${i}-${name}`);
      writeFileSync(path, text);
      const args = ['serve', '--stdio', ...flags, '--db', join(dir, 'x.db'), '--config', path];
      const runEnv = { PATH: process.env.PATH ?? '', ...env };
      // The first case of each source through the binary, the rest through its entry in this process: the same
      // code refuses the file and writes the line (test/helpers/toolgate-main.ts).
      const r = j === 0 ? spawnSync(process.execPath, [TOOLGATE_BIN, ...args], { env: runEnv, input: '', encoding: 'utf8' }) : await toolgateMain(args, runEnv);
      assert.equal(r.status, 2, `${source} ${name}: ${r.stderr}`);
      assert.match(r.stderr, /^toolgate: config /, `${source} ${name}`);
      for (const m of marks) assert.ok(!(r.stdout + r.stderr).includes(m), `${source} ${name}: echoed in ${r.stderr}`);
    }
  }
  // An ordinary value is still named.
  const plain = join(dir, 'plain.json');
  writeFileSync(plain, JSON.stringify(profile({ allowed_actions: ['calendar.fly'] })));
  const r = await toolgateMain(['serve', '--stdio', '--db', join(dir, 'x.db'), '--config', plain], {
    PATH: process.env.PATH ?? '', TOOLGATE_HOME: tempDir(), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET,
  });
  assert.match(r.stderr, /"calendar\.fly" matches no action/);
});

test('the log lines serve writes before its database opens mask the configured secrets too', async () => {
  // Contract section 5: the warning about a password in --db (and the failure after it) came before the
  // logger knew the secrets; the environment's and the data folder's are masked from the first line.
  const home = tempDir();
  const devSecret = 'dev-secret-in-the-data-folder-0123456789';
  writeFileSync(join(home, 'dev-bearer-secret'), `${devSecret}\n`, { mode: 0o600 });
  const cases: Array<[string, NodeJS.ProcessEnv, string[]]> = [
    [TEST_BEARER_SECRET, { TOOLGATE_HOME: tempDir(), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET }, []],
    [devSecret, { TOOLGATE_HOME: home }, ['--dev']],
  ];
  for (const [i, [secret, env, flags]] of cases.entries()) {
    // Nothing listens on port 1: the start fails after the warning.
    const args = ['serve', '--stdio', ...flags, '--db', `postgres://u:p@127.0.0.1:1/${secret}`];
    const runEnv = { PATH: process.env.PATH ?? '', ...env };
    // The first through the binary; the second through its entry here, whose log lines reach the test too.
    const r = i === 0 ? spawnSync(process.execPath, [TOOLGATE_BIN, ...args], { env: runEnv, input: '', encoding: 'utf8', timeout: 60_000 }) : await toolgateMain(args, runEnv);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /the database password is on the command line/);
    assert.ok(!(r.stdout + r.stderr).includes(secret.slice(0, 10)), r.stderr);
  }
});

test('serve --dev creates a local secret that dev-token signs with', async () => {
  const dir = tempDir();
  const db = join(dir, 'toolgate.db');
  const token = spawnSync(process.execPath, [TOOLGATE_BIN, 'dev-token', '--user', 'zoe', '--phone', '+15559999', '--db', db], {
    env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: dir }, encoding: 'utf8',
  });
  assert.equal(token.status, 0, token.stderr);
  const host = await startInProcess({ executor: 'subprocess', dataDir: dir, args: ['--dev'], env: { TOOLGATE_BEARER_SECRET: '' } });
  try {
    const s = await openSession(host, token.stdout.trim());
    assert.equal(s.user_id, 'zoe');
  } finally {
    await host.stop();
  }
});
