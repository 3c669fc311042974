/**
 * Automation: a trusted backend runs a job for its owner without any user
 * bearer token; the job alone decides the skills and the whitelist.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { dbRows } from '../helpers/db.js';
import { pgDatabaseFor, TEST_PG_URL } from '../helpers/pg.js';
import type { ResponseError } from 'vscode-jsonrpc/node';
import { connectWs } from '../helpers/host.js';
import { startInProcess } from '../helpers/in-process.js';
import { TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { TEST_BEARER_SECRET, mintBearer } from '../helpers/tokens.js';
import { splitVariants } from '../helpers/split-tokens.js';
import { toolgateMain } from '../helpers/toolgate-main.js';

const SERVICE_KEY = 'service-key-for-tests-0123456789';

/** `toolgate automation add` run by the binary (a process of its own). */
function addJobSpawned(dbPath: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [TOOLGATE_BIN, 'automation', 'add', '--db', dbPath, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same command through the binary's entry in this process (test/helpers/toolgate-main.ts). */
const addJob = (dbPath: string, ...args: string[]) => toolgateMain(['automation', 'add', '--db', dbPath, ...args], process.env);

test('automation add validates its flags and prints a job id', async () => {
  const dbPath = join(tempDir(), 'toolgate.db');
  const ok = addJobSpawned(dbPath, '--owner', 'olga', '--skills', 'calendar', '--allow', 'calendar.read,calendar.create');
  assert.equal(ok.status, 0, ok.stderr);
  assert.match((JSON.parse(ok.stdout) as { job_id: string }).job_id, /^job_/);
  const badAction = addJobSpawned(dbPath, '--owner', 'olga', '--skills', 'calendar', '--allow', 'calendar.fly');
  assert.equal(badAction.status, 2);
  assert.match(badAction.stderr, /calendar\.fly/);
  const badSkill = await addJob(dbPath, '--owner', 'olga', '--skills', 'astrology', '--allow', 'calendar.read');
  assert.equal(badSkill.status, 2);
  assert.equal((await addJob(dbPath, '--skills', 'calendar', '--allow', 'calendar.read')).status, 2);
});

test('automation add refuses a token or configured secret in any flag, stores nothing and echoes none of it', async () => {
  const dataDir = tempDir();
  const dbPath = join(dataDir, 'toolgate.db');
  assert.equal((await addJob(dbPath, '--owner', 'olga', '--allow', 'calendar.read')).status, 0);
  const token = await mintBearer('alice');
  const marks = [token.split('.')[1]!, token.split('.')[2]!, TEST_BEARER_SECRET];
  const offers = [`x${token}`, splitVariants(token)['a zero-width space after each dot']!];
  const cases = offers.flatMap((t) => [
    ['--owner', t, '--allow', 'calendar.read'],
    ['--owner', 'olga', '--allow', `calendar.read,${t}`],
    ['--owner', 'olga', '--skills', `calendar,${t}`, '--allow', 'calendar.read'],
    ['--owner', 'olga', '--allow', 'calendar.read', '--ask', t],
    ['--owner', 'olga', '--allow', 'calendar.read', '--quota', JSON.stringify({ [t]: { per_minute: 1 } })],
  ]);
  cases.push(['--owner', `olga-${TEST_BEARER_SECRET}`, '--allow', 'calendar.read']);
  for (const [i, args] of cases.entries()) {
    const env = { ...process.env, TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET };
    // The first through the binary, the others through its entry in this process.
    const r = i === 0 ? spawnSync(process.execPath, [TOOLGATE_BIN, 'automation', 'add', '--db', dbPath, ...args], { encoding: 'utf8', env }) : await toolgateMain(['automation', 'add', '--db', dbPath, ...args], env);
    assert.equal(r.status, 2, `${args[0]} ${args[2]}: ${r.stdout}`);
    assert.match(r.stderr, /bearer token or credential/);
    for (const m of marks) assert.ok(!(r.stdout + r.stderr).includes(m), `${args.join(' ').slice(0, 40)}: echoed`);
  }
  assert.equal((await dbRows(dbPath, 'SELECT id FROM automation_jobs')).length, 1);
  for (const f of readdirSync(dataDir).filter((n) => n.startsWith('toolgate.db'))) {
    const bytes = readFileSync(join(dataDir, f)).toString('latin1');
    for (const m of marks) assert.ok(!bytes.includes(m), `not in ${f}`);
  }
});

test('automation add refuses the data folder\'s dev secret and signing key as it does the environment\'s secret', async () => {
  // Contract section 5: the bearer secret counts wherever it lives; TOOLGATE_HOME's dev secret passed unseen.
  const dataDir = tempDir();
  const dbPath = join(dataDir, 'toolgate.db');
  const env: NodeJS.ProcessEnv = { ...process.env, TOOLGATE_HOME: dataDir };
  delete env.TOOLGATE_BEARER_SECRET;
  delete env.TOOLGATE_BEARER_JWKS;
  delete env.TOOLGATE_SERVICE_KEY;
  const spawned = (args: string[]) => spawnSync(process.execPath, [TOOLGATE_BIN, ...args], { encoding: 'utf8', env });
  const run = (args: string[]) => toolgateMain(args, env);
  // dev-token makes the dev secret, dev-credential the signing key: both in the data folder, as a newcomer's are.
  assert.equal((await run(['dev-token', '--user', 'olga'])).status, 0);
  assert.equal((await run(['dev-credential', '--user', 'olga', '--action', 'calendar.read', '--db', dbPath])).status, 0);
  const devSecret = readFileSync(join(dataDir, 'dev-bearer-secret'), 'utf8').trim();
  const privateD = (JSON.parse(readFileSync(join(dataDir, 'credential-signing-key.jwk'), 'utf8')) as { d: string }).d;
  for (const secret of [devSecret, privateD]) {
    const cases = [
      ['--owner', `olga-${secret}`, '--allow', 'calendar.read'],
      ['--owner', 'olga', '--allow', `calendar.read,${secret}`],
      ['--owner', 'olga', '--skills', `calendar,${secret}`, '--allow', 'calendar.read'],
      // `--flag=value`: a secret may begin with `-` (base64url), which parseArgs would take for a flag after a space.
      ['--owner', 'olga', '--allow', 'calendar.read', `--ask=${secret}`],
    ];
    for (const [i, args] of cases.entries()) {
      // The first of each secret through the binary, the others through its entry in this process.
      const r = i === 0 ? spawned(['automation', 'add', '--db', dbPath, ...args]) : await run(['automation', 'add', '--db', dbPath, ...args]);
      assert.equal(r.status, 2, `${args[0]} ${args[2]}: ${r.stdout}`);
      assert.match(r.stderr, /bearer token or credential/);
      assert.ok(!(r.stdout + r.stderr).includes(secret), `${args.join(' ').slice(0, 24)}: echoed`);
    }
  }
  assert.equal((await dbRows(dbPath, 'SELECT id FROM automation_jobs')).length, 0);
  for (const f of readdirSync(dataDir).filter((n) => n.startsWith('toolgate.db'))) {
    const bytes = readFileSync(join(dataDir, f)).toString('latin1');
    for (const secret of [devSecret, privateD]) assert.ok(!bytes.includes(secret), `not in ${f}`);
  }
});

test('automation add refuses the private part of the key TOOLGATE_CREDENTIAL_KEY_FILE names, and never echoes it', () => {
  // The daemon signs with that file's key when it is set: its `d` is a configured secret like the data folder's.
  const dataDir = tempDir();
  const keyFile = join(dataDir, 'signing.jwk');
  writeFileSync(keyFile, JSON.stringify(generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' })), { mode: 0o600 });
  const { d } = JSON.parse(readFileSync(keyFile, 'utf8')) as { d: string };
  const env: NodeJS.ProcessEnv = { ...process.env, TOOLGATE_HOME: dataDir, TOOLGATE_CREDENTIAL_KEY_FILE: keyFile };
  const dbPath = join(dataDir, 'toolgate.db');
  // `--owner=`: `d` is base64url and may begin with `-`, which parseArgs would take for a flag after a space.
  const r = spawnSync(process.execPath, [TOOLGATE_BIN, 'automation', 'add', '--db', dbPath, `--owner=${d}`, '--allow', 'calendar.read'], { encoding: 'utf8', env });
  assert.equal(r.status, 2, r.stdout);
  assert.match(r.stderr, /bearer token or credential/);
  assert.ok(!(r.stdout + r.stderr).includes(d), 'echoed');
  const help = spawnSync(process.execPath, [TOOLGATE_BIN, 'help', d], { encoding: 'utf8', env });
  assert.equal(help.status, 2);
  assert.ok(!(help.stdout + help.stderr).includes(d), `help echoed it: ${help.stderr}`);
});

test('over stdio and over ws with the service key, a job acts as its owner within its own whitelist', async () => {
  const dataDir = tempDir();
  // The PostgreSQL pass: the daemons below use this data folder's database.
  const dbPath = TEST_PG_URL ? await pgDatabaseFor(dataDir) : join(dataDir, 'toolgate.db');
  const { job_id } = JSON.parse((await addJob(dbPath, '--owner', 'olga', '--skills', 'calendar', '--allow', 'calendar.read,calendar.create')).stdout) as { job_id: string };

  for (const transport of ['stdio', 'ws'] as const) {
    const host = await startInProcess({ executor: 'subprocess', transport, dataDir, env: { TOOLGATE_SERVICE_KEY: SERVICE_KEY } });
    try {
      await host.request('initialize', { protocol_version: '1', ...(transport === 'ws' ? { service_key: SERVICE_KEY } : {}) });
      const s = await host.request<{ session_id: string; user_id: string; enabled_skills: string[]; allowed_actions: string[] }>('session/open', {
        auth: { type: 'automation', job_id },
      });
      assert.equal(s.user_id, 'olga');
      assert.deepEqual(s.enabled_skills, ['calendar']);
      assert.deepEqual(s.allowed_actions, ['calendar.create', 'calendar.read']);
      const created = await host.request<{ status: string }>('tool/invoke', {
        session_id: s.session_id, thread_id: `job-${transport}`, tool_call_id: 'c1',
        args: { module: 'calendar', method: 'create', input: { title: `Job ${transport}`, start_at: '2026-02-02T08:00:00Z', end_at: '2026-02-02T09:00:00Z' } },
      });
      assert.equal(created.status, 'success');
      const denied = await host.request<{ status: string; content: Array<{ text: string }> }>('tool/invoke', {
        session_id: s.session_id, thread_id: `job-${transport}`, tool_call_id: 'c2', args: { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } },
      });
      assert.equal(JSON.parse(denied.content[0]!.text).error.code, 'ACTION_NOT_ALLOWED');
      const missing = (await host.request('session/open', { auth: { type: 'automation', job_id: 'job_nope' } }).catch((e: unknown) => e)) as ResponseError<unknown>;
      assert.equal(missing.code, -32602);
    } finally {
      await host.stop();
    }
  }

  const audit = await dbRows(dbPath, "SELECT subject, source, job_id FROM credential_audit WHERE source = 'automation'");
  assert.deepEqual(audit, [
    { subject: 'olga', source: 'automation', job_id },
    { subject: 'olga', source: 'automation', job_id },
  ]);
});

test('a wrong service key is refused at initialize; without one, automation is refused', async () => {
  const host = await startInProcess({ executor: 'subprocess', transport: 'ws', env: { TOOLGATE_SERVICE_KEY: SERVICE_KEY } });
  try {
    const wrong = (await host.request('initialize', { protocol_version: '1', service_key: 'nope' }).catch((e: unknown) => e)) as ResponseError<unknown>;
    assert.equal(wrong.code, -32001);
    assert.ok(!JSON.stringify(wrong).includes(SERVICE_KEY));
    const plain = await connectWs(host.port!);
    await plain.request('initialize', { protocol_version: '1' });
    const refused = (await plain.request('session/open', { auth: { type: 'automation', job_id: 'job_x' } }).catch((e: unknown) => e)) as ResponseError<unknown>;
    assert.equal(refused.code, -32001);
    await plain.close();
  } finally {
    await host.stop();
  }
  assert.ok(!host.stderr().includes(SERVICE_KEY), 'the service key is never logged');
});
