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
import { ConfigError } from '../../../src/config/config-error.js';
import { loadConfig } from '../../../src/config/config.js';
import { REPO_ROOT, TOOLGATE_BIN, tempDir } from '../../helpers/repo.js';
import { TEST_BEARER_SECRET } from '../../helpers/tokens.js';
import { toolgateMain } from '../../helpers/toolgate-main.js';

const SKILLS = ['calendar', 'contacts', 'memory'];
const EXAMPLE_JSON = join(REPO_ROOT, 'toolgate.config.example.json');
const EXAMPLE_YAML = join(REPO_ROOT, 'toolgate.config.example.yaml');

/** Every key of contract section 8, plus the limits the daemon adds. */
const KEYS = [
  'agents', 'store.synchronous', 'store.pool_size', 'store.listen_url', 'limits.max_message_bytes', 'limits.max_in_flight', 'limits.call_timeout_ms',
  'limits.max_sessions_per_connection', 'limits.max_subscriptions_per_connection', 'limits.shutdown_grace_ms', 'limits.ping_interval_ms',
  'limits.max_processes', 'limits.ws_high_water_bytes', 'limits.ws_max_buffered_bytes', 'limits.max_result_bytes', 'auth.max_token_lifetime_s',
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
  assert.deepEqual(fromJson.agents.get('reader'), { enabledSkills: ['calendar', 'memory'], allowedActions: ['calendar.read'], quotas: [], approval: { ask: new Set(), ttlS: 600 } });
  assert.deepEqual(fromJson.agents.get('default')!.quotas, [
    { pattern: 'calendar.create', actions: ['calendar.create'], limits: { minute: 30, day: 1000 } },
    { pattern: 'memory.*', actions: ['memory.forget', 'memory.read', 'memory.update'], limits: { hour: 600 } },
  ]);
  // The example shows the destructive actions asking (contract section 17).
  assert.deepEqual(fromJson.agents.get('default')?.approval, { ask: new Set(['calendar.delete', 'calendar.share', 'memory.forget']), ttlS: 600 });
  assert.equal(fromJson.store.synchronous, 'FULL');
  assert.equal(fromJson.limits.callTimeoutMs, 30000);
  assert.equal(fromJson.limits.maxResultBytes, 1048576);
});

test('limits.max_result_bytes is validated like every limit: a positive integer, else its key is named', () => {
  for (const bad of ['0', '-1', '1.5', '"1MiB"']) {
    const f = file('result-bytes.json', `{"agents": {"a": {"enabled_skills": [], "allowed_actions": ["memory.read"]}}, "limits": {"max_result_bytes": ${bad}}}`);
    assert.match(configError(f), /limits\.max_result_bytes: /, bad);
  }
});

test('quotas: a pattern that matches no action, no window, or a count out of range is an error naming the key', () => {
  const profile = (quotas: unknown) => file('q.json', JSON.stringify({ agents: { a: { enabled_skills: [], allowed_actions: ['calendar.read'], quotas } } }));
  const nope = profile({ 'calendar.nope': { per_day: 1 } });
  assert.equal(configError(nope), `config ${nope}: agents.a.quotas: "calendar.nope" matches no action`);
  assert.match(configError(profile({ 'calendar.read': {} })), /agents\.a\.quotas\.calendar\.read: set at least one of per_minute, per_hour, per_day$/);
  assert.match(configError(profile({ 'calendar.read': { per_day: 0 } })), /agents\.a\.quotas\.calendar\.read\.per_day: /);
  assert.match(configError(profile({ 'calendar.read': { per_week: 3 } })), /unknown key agents\.a\.quotas\.calendar\.read\.per_week$/);
});

test('approval: ask takes patterns as allowed_actions does, ttl_s defaults to 600 and is at most 86400, unknown keys refused', () => {
  const profile = (approval: unknown) => ({ agents: { default: { enabled_skills: ['calendar'], allowed_actions: ['calendar.*'], approval } } });
  const load = (approval: unknown) => loadConfig(file('a.json', JSON.stringify(profile(approval))), SKILLS).agents.get('default')?.approval;
  assert.deepEqual(load({ ask: ['memory.*'] }), { ask: new Set(['memory.forget', 'memory.read', 'memory.update']), ttlS: 600 });
  assert.deepEqual(load({ ask: ['calendar.delete'], ttl_s: 86400 }), { ask: new Set(['calendar.delete']), ttlS: 86400 });
  assert.match(configError(file('b.json', JSON.stringify(profile({ ask: ['calendar.delete'], ttl_s: 86401 })))), /agents\.default\.approval\.ttl_s.*86400/);
  assert.match(configError(file('c.json', JSON.stringify(profile({ ask: ['calendar.remove'] })))), /agents\.default\.approval\.ask.*calendar\.remove/);
  assert.match(configError(file('d.json', JSON.stringify(profile({ ask: [], ttl: 5 })))), /ttl/);
  assert.match(configError(file('e.json', JSON.stringify(profile({ ttl_s: 5 })))), /ask/);
});

test('a .yml file is YAML too, and the same as its JSON', () => {
  const json = { agents: { default: { enabled_skills: ['calendar'], allowed_actions: ['calendar.read'] } }, limits: { call_timeout_ms: 5000 } };
  const yml = file('c.yml', 'agents:\n  default:\n    enabled_skills: [calendar]\n    allowed_actions: [calendar.read]\nlimits:\n  call_timeout_ms: 5000\n');
  assert.deepEqual(loadConfig(yml, SKILLS), loadConfig(file('c.json', JSON.stringify(json)), SKILLS));
});

test('an unknown key is an error naming the file and the key, in JSON and YAML alike', () => {
  const j = file('bad.json', JSON.stringify({ agents: { a: { enabled_skills: [], allowed_actions: ['calendar.read'] } }, limits: { call_timeout: 5 } }));
  assert.equal(configError(j), `config ${j}: unknown key limits.call_timeout (did you mean limits.call_timeout_ms?)`);
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
  assert.equal(r.stderr.trimEnd(), `toolgate: config ${y}: unknown key limit (did you mean limits?)`);
});

const AGENT = { enabled_skills: ['calendar'], allowed_actions: ['calendar.read'] };

/** `serve --stdio` with this config (or these flags): stderr and the exit status. */
function serveWith(args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [TOOLGATE_BIN, 'serve', '--stdio', '--db', join(tempDir(), 't.db'), ...args], {
    env: { PATH: process.env.PATH ?? '', TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET },
    encoding: 'utf8',
    input: '',
  });
  return { status: r.status, stderr: r.stderr };
}

/** The same through the binary's entry in this process (test/helpers/toolgate-main.ts), for a refusal's further cases. */
const serveInProcess = (args: string[]) =>
  toolgateMain(['serve', '--stdio', '--db', join(tempDir(), 't.db'), ...args], { PATH: process.env.PATH ?? '', TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET });

test('a millisecond value above 2147483647 (the longest Node timer) is refused by the config and by the flags, one line, exit 2', async () => {
  for (const key of ['call_timeout_ms', 'ping_interval_ms', 'shutdown_grace_ms']) {
    const j = file(`${key}.json`, JSON.stringify({ agents: { default: AGENT }, limits: { [key]: 2147483648 } }));
    assert.match(configError(j), new RegExp(`^config ${j}: limits\\.${key}: must be at most 2147483647`));
    const atMost = file(`${key}-ok.json`, JSON.stringify({ agents: { default: AGENT }, limits: { [key]: 2147483647 } }));
    loadConfig(atMost, SKILLS);
  }
  const j = file('timer.json', JSON.stringify({ agents: { default: AGENT }, limits: { call_timeout_ms: 2147483648 } }));
  const byFile = serveWith(['--config', j]);
  assert.equal(byFile.status, 2, byFile.stderr);
  assert.equal(byFile.stderr.trimEnd().split('\n').length, 1, byFile.stderr);
  for (const flag of ['--call-timeout-ms', '--ping-interval-ms', '--shutdown-grace-ms']) {
    const r = await serveInProcess([flag, '2147483648']);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr.trimEnd(), new RegExp(`^toolgate serve: ${flag} must be an integer from 1 to 2147483647`));
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
  }
});

test('a YAML alias bomb is one line, exit 2 (no crash, no stack)', async () => {
  const rows = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
  for (const [prev, name] of [['a', 'b'], ['b', 'c'], ['c', 'd'], ['d', 'e'], ['e', 'f'], ['f', 'g'], ['g', 'h']]) {
    rows.push(`${name}: &${name} [${Array(9).fill(`*${prev!}`).join(',')}]`);
  }
  const y = file('bomb.yaml', `${rows.join('\n')}\n`);
  assert.match(configError(y), new RegExp(`^config ${y}: not valid YAML: more than 100 alias expansions`));
  const r = await serveInProcess(['--config', y]);
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr.trimEnd(), `toolgate: ${configError(y)}`);
});

test('a custom YAML tag (!!js/function) is refused in exactly one line, with no YAMLWarning', () => {
  const y = file('tag.yaml', 'agents:\n  default: !!js/function "function () { return 1 }"\n');
  assert.match(configError(y), new RegExp(`^config ${y}: not valid YAML \\(line 2, column 12\\): Unresolved tag`));
  const r = serveWith(['--config', y]);
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr.trimEnd(), `toolgate: ${configError(y)}`);
});

test('a config that is not a regular file (/dev/zero) or is larger than 1 MiB is refused at once, one line', () => {
  assert.equal(configError('/dev/zero'), 'config /dev/zero: not a regular file');
  assert.equal(configError(tempDir()).endsWith(': not a regular file'), true);
  const big = file('big.json', `${JSON.stringify({ agents: { default: AGENT } })}${' '.repeat(1024 * 1024)}`);
  assert.equal(configError(big), `config ${big}: larger than 1048576 bytes (1 MiB)`);
  const r = serveWith(['--config', '/dev/zero']);
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr.trimEnd(), 'toolgate: config /dev/zero: not a regular file');
  const exactly = file('exact.json', JSON.stringify({ agents: { default: AGENT } }).padEnd(1024 * 1024, ' '));
  assert.equal(loadConfig(exactly, SKILLS).agents.size, 1);
});

test('a UTF-8 byte-order mark before a JSON or YAML config is accepted', () => {
  const json = JSON.stringify({ agents: { default: AGENT } });
  const j = file('bom.json', `\uFEFF${json}`);
  assert.deepEqual(loadConfig(j, SKILLS), loadConfig(file('plain.json', json), SKILLS));
  const y = file('bom.yaml', '\uFEFFagents:\n  default: {enabled_skills: [calendar], allowed_actions: [calendar.read]}\n');
  assert.deepEqual(loadConfig(y, SKILLS), loadConfig(j, SKILLS));
});

test('a bare "*" in http.allowed_origins or http.allowed_hosts is refused with a line saying what to write instead', () => {
  for (const key of ['allowed_origins', 'allowed_hosts']) {
    const j = file(`${key}.json`, JSON.stringify({ agents: { default: AGENT }, http: { [key]: ['http://localhost:3000', '*'] } }));
    assert.match(configError(j), new RegExp(`^config ${j}: http\\.${key}\\.1: a bare "\\*" is not supported: list the origins`));
  }
  const scheme = file('scheme.json', JSON.stringify({ agents: { default: AGENT }, http: { allowed_origins: ['https://*'] } }));
  assert.deepEqual(loadConfig(scheme, SKILLS).http.allowedOrigins, ['https://*']);
});

test('a typo in a required key names the unknown key and the key it was likely meant to be', () => {
  const j = file('typo.json', JSON.stringify({ agents: { default: { enabled_skills: ['calendar'], allowed_action: ['calendar.read'] } } }));
  assert.equal(configError(j), `config ${j}: unknown key agents.default.allowed_action (did you mean agents.default.allowed_actions?)`);
  const y = file('typo.yaml', 'agent:\n  default: {enabled_skills: [calendar], allowed_actions: [calendar.read]}\n');
  assert.equal(configError(y), `config ${y}: unknown key agent (did you mean agents?)`);
});

test('auth.scopes: a list of RFC 6749 scope tokens, each once, and only with auth.issuer; a bad one names its key', () => {
  const issuer = 'http://127.0.0.1:9/';
  const ok = file('scopes.json', JSON.stringify({ agents: { default: AGENT }, auth: { issuer, scopes: ['mcp', 'tools:read'] } }));
  assert.deepEqual(loadConfig(ok, SKILLS).auth.scopes, ['mcp', 'tools:read']);
  assert.equal(loadConfig(file('none.json', JSON.stringify({ agents: { default: AGENT }, auth: { issuer } })), SKILLS).auth.scopes, undefined);
  const cases: Array<[unknown, RegExp]> = [
    [{ issuer, scopes: ['mcp tools'] }, /auth\.scopes\.0: a scope is 1-200 printable ASCII characters without space/],
    [{ issuer, scopes: ['say"hi'] }, /auth\.scopes\.0: a scope is/],
    [{ issuer, scopes: [''] }, /auth\.scopes\.0: a scope is/],
    [{ issuer, scopes: ['mcp', 'mcp'] }, /auth\.scopes: each scope once/],
    [{ issuer, scopes: 'mcp' }, /auth\.scopes: /],
    [{ scopes: ['mcp'] }, /auth\.issuer: required when auth\.audience, auth\.jwks_url or auth\.scopes is set/],
  ];
  for (const [auth, expected] of cases) {
    const f = file('bad-scopes.json', JSON.stringify({ agents: { default: AGENT }, auth }));
    assert.match(configError(f), expected, JSON.stringify(auth));
  }
});

test('a key named __proto__ is refused like any unknown key, in every map of the file (JSON and YAML), never dropped', () => {
  const base = { enabled_skills: [], allowed_actions: ['calendar.read'] };
  // Written as text: an object literal's __proto__ would set the prototype instead of a key.
  const cases: Array<[string, string]> = [
    [`{"agents": {"a": ${JSON.stringify(base)}, "__proto__": ${JSON.stringify(base)}}}`, 'agents.__proto__'],
    [`{"agents": {"a": {"enabled_skills": [], "allowed_actions": ["calendar.read"], "quotas": {"__proto__": {"per_day": 1}}}}}`, 'agents.a.quotas.__proto__'],
    [`{"agents": {"a": ${JSON.stringify(base)}}, "limits": {"action_timeout_ms": {"__proto__": 5}}}`, 'limits.action_timeout_ms.__proto__'],
  ];
  for (const [text, key] of cases) {
    const j = file('proto.json', text);
    assert.equal(configError(j), `config ${j}: unknown key ${key}`, text);
  }
  const y = file('proto.yaml', 'agents:\n  a: {enabled_skills: [], allowed_actions: [calendar.read], quotas: {__proto__: {per_day: 1}}}\n');
  assert.equal(configError(y), `config ${y}: unknown key agents.a.quotas.__proto__`);
});

test('automation add --quota with a __proto__ key is refused naming it, never dropped', async () => {
  const { addAutomationJob } = await import('../../../src/sessions/automation-jobs.js');
  const dir = tempDir();
  await assert.rejects(
    addAutomationJob({ owner: 'dave', skills: [], allow: ['calendar.read'], quota: '{"__proto__": {"per_day": 1}}', db: join(dir, 'j.db'), env: { TOOLGATE_HOME: dir } }),
    (err: unknown) => err instanceof ConfigError && err.message === '--quota: unknown key __proto__',
  );
});

test('a value far past its bound (1e99) is refused with that bound, not the largest safe integer', () => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ limits: { call_timeout_ms: 1e99 } }, /limits\.call_timeout_ms: must be at most 2147483647 /],
    [{ limits: { action_timeout_ms: { 'calendar.read': 1e99 } } }, /limits\.action_timeout_ms\.calendar\.read: must be at most 2147483647 /],
    [{ limits: { cancel_grace_ms: 1e99 } }, /limits\.cancel_grace_ms: must be at most 2147483647 /],
    [{ agents: { default: { ...AGENT, quotas: { 'calendar.read': { per_day: 1e99 } } } } }, /agents\.default\.quotas\.calendar\.read\.per_day: must be at most 1000000000$/],
    [{ agents: { default: { ...AGENT, approval: { ask: ['calendar.read'], ttl_s: 1e99 } } } }, /agents\.default\.approval\.ttl_s: must be at most 86400 /],
  ];
  for (const [extra, expected] of cases) {
    const j = file('far.json', JSON.stringify({ agents: { default: AGENT }, ...extra }));
    assert.match(configError(j), expected, JSON.stringify(extra));
  }
});
