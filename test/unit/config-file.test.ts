/**
 * `--config` in JSON or YAML: the example files hold every key with its
 * default and load to the same configuration; mistakes are one line naming
 * the file and the key (or, for syntax, the line).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../src/daemon/bearer-auth.js';
import { loadConfig } from '../../src/daemon/config.js';
import { REPO_ROOT, TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { TEST_BEARER_SECRET } from '../helpers/tokens.js';

const SKILLS = ['calendar', 'contacts', 'memory'];
const EXAMPLE_JSON = join(REPO_ROOT, 'toolgate.config.example.json');
const EXAMPLE_YAML = join(REPO_ROOT, 'toolgate.config.example.yaml');

/** Every key of contract section 8, plus the limits the daemon adds. */
const KEYS = [
  'agents', 'store.synchronous', 'store.pool_size', 'limits.max_message_bytes', 'limits.max_in_flight', 'limits.call_timeout_ms',
  'limits.max_sessions_per_connection', 'limits.max_subscriptions_per_connection', 'limits.shutdown_grace_ms', 'limits.ping_interval_ms',
  'limits.max_processes', 'limits.ws_high_water_bytes', 'limits.ws_max_buffered_bytes', 'auth.max_token_lifetime_s',
  'http.allowed_origins', 'http.allowed_hosts', 'mcp.agent',
];

function file(name: string, text: string): string {
  const path = join(tempDir(), name);
  writeFileSync(path, text);
  return path;
}

function configError(path: string): string {
  try {
    loadConfig(path, SKILLS);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    assert.ok(!err.message.includes('\n'), `one line: ${err.message}`);
    return err.message;
  }
  assert.fail(`${path} loaded`);
}

test('the example config names every key, and the JSON and YAML examples load to the same configuration', () => {
  const example = JSON.parse(readFileSync(EXAMPLE_JSON, 'utf8')) as Record<string, Record<string, unknown>>;
  for (const key of KEYS) {
    const [section, name] = key.split('.');
    assert.ok(name === undefined ? section! in example : name in (example[section!] ?? {}), `example has ${key}`);
  }
  const fromJson = loadConfig(EXAMPLE_JSON, SKILLS);
  assert.deepEqual(loadConfig(EXAMPLE_YAML, SKILLS), fromJson);
  assert.deepEqual(fromJson.agents.get('reader'), { enabledSkills: ['calendar', 'memory'], allowedActions: ['calendar.read'] });
  assert.equal(fromJson.store.synchronous, 'FULL');
  assert.equal(fromJson.limits.callTimeoutMs, 30000);
});

test('a .yml file is YAML too, and the same as its JSON', () => {
  const json = { agents: { default: { enabled_skills: ['calendar'], allowed_actions: ['calendar.read'] } }, limits: { call_timeout_ms: 5000 } };
  const yml = file('c.yml', 'agents:\n  default:\n    enabled_skills: [calendar]\n    allowed_actions: [calendar.read]\nlimits:\n  call_timeout_ms: 5000\n');
  assert.deepEqual(loadConfig(yml, SKILLS), loadConfig(file('c.json', JSON.stringify(json)), SKILLS));
});

test('an unknown key is an error naming the file and the key, in JSON and YAML alike', () => {
  const j = file('bad.json', JSON.stringify({ agents: { a: { enabled_skills: [], allowed_actions: ['calendar.read'] } }, limits: { call_timeout: 5 } }));
  assert.equal(configError(j), `config ${j}: unknown key limits.call_timeout`);
  const y = file('bad.yaml', 'agents:\n  a: {enabled_skills: [], allowed_actions: [calendar.read]}\nlogging: verbose\n');
  assert.equal(configError(y), `config ${y}: unknown key logging`);
});

test('a wrong value names its key; a YAML syntax error names the line', () => {
  const y = file('types.yaml', 'agents:\n  a: {enabled_skills: [], allowed_actions: [calendar.read]}\nstore:\n  synchronous: OFF\n');
  assert.match(configError(y), new RegExp(`^config ${y}: store\\.synchronous: `));
  const broken = file('broken.yaml', 'agents:\n  a: {enabled_skills: [x}\n');
  assert.match(configError(broken), new RegExp(`^config ${broken}: not valid YAML \\(line 2, column \\d+\\): `));
  const dup = file('dup.yaml', 'agents: {}\nagents: {}\n');
  assert.match(configError(dup), /not valid YAML \(line 2, column 1\): Map keys must be unique/);
});

test('serve with a bad YAML config: one line, exit 2', () => {
  const y = file('serve.yaml', 'agents:\n  default: {enabled_skills: [calendar], allowed_actions: [calendar.read]}\nlimit: {}\n');
  const dir = tempDir();
  const r = spawnSync(process.execPath, [TOOLGATE_BIN, 'serve', '--stdio', '--config', y, '--db', join(dir, 't.db')], {
    env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: tempDir(), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET },
    encoding: 'utf8',
    input: '',
  });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr.trimEnd(), `toolgate: config ${y}: unknown key limit`);
});
