/**
 * Fuzz: project-cli argv and stdin, and config files. The CLI is run as a
 * process with random argv (real and unknown actions, flags of every shape,
 * credentials offered by flag) and random stdin, under valid, expired,
 * foreign or missing credentials: stdout is always exactly one JSON document,
 * the exit code matches its error code, nothing is INTERNAL, no credential is
 * echoed. Config files: random mutations of the default config are either
 * loaded or refused with a ConfigError naming the file — in-process for
 * many, and as `serve` processes for a few (exit non-zero, a clear line, no
 * stack).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACTION_NAMES } from '../../src/cli-router/registry.js';
import { exitCodeFor, type ToolErrorCode } from '../../src/cli-router/errors.js';
import { DEFAULT_CONFIG, loadConfig } from '../../src/config/config.js';
import { ConfigError } from '../../src/config/config-error.js';
import { discoverSkills } from '../../src/sessions/skills.js';
import { PROJECT_CLI_BIN, TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { ALL_ACTIONS, generateTestKeyPair, mintCredential, recordTrustedKey } from '../helpers/credentials.js';
import { TEST_BEARER_SECRET } from '../helpers/tokens.js';
import { FIELD_NAMES, Rng, SEED, randomJson, randomString, withSeed } from './prng.js';
import { assertNoSecret, assertNoSecretInDbFiles } from './invariants.js';
import { slowSuite } from '../helpers/quick.js';

const CLI_RUNS = 24;
const CONFIGS = 1500;
const SERVE_CONFIGS = 2;

function run(bin: string, args: string[], env: Record<string, string>, stdin: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // No OS lets a caller pass NUL inside argv or the environment: strip it rather than test the impossible.
    const clean = (v: string) => v.replace(/\0/g, '');
    const safeEnv = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, clean(v)]));
    const child = spawn(process.execPath, [bin, ...args.map(clean)], { env: safeEnv, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.stdin.on('error', () => {});
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

test(`project-cli argv/stdin: one JSON document, the right exit code, never INTERNAL, no credential echoed (seed ${SEED})`, slowSuite({ timeout: 150_000 }), () =>
  withSeed('project-cli argv/stdin', async () => {
    const rng = new Rng(SEED ^ 0xc11);
    const dir = tempDir('toolgate-fuzz-cli-');
    const db = join(dir, 'toolgate.db');
    await recordTrustedKey(db);
    const foreign = await generateTestKeyPair();
    const now = Math.floor(Date.now() / 1000);
    const creds = [
      await mintCredential({ sub: 'fuzz-alice', actions: ALL_ACTIONS }),
      await mintCredential({ sub: 'fuzz-alice', actions: ['memory.read'] }),
      await mintCredential({ sub: 'fuzz-alice', actions: ALL_ACTIONS, iat: now - 900, exp: now - 300 }),
      await mintCredential({ sub: 'fuzz-alice', actions: ALL_ACTIONS, key: foreign }),
      'garbage', '',
    ];
    const marks = creds.filter((c) => c.includes('.')).map((c) => c.split('.')[2]!);
    const batch: Array<Promise<void>> = [];
    for (let i = 0; i < CLI_RUNS; i++) {
      const r = rng.fork(i);
      const action = r.bool(0.85) ? r.pick(ACTION_NAMES) : `${randomString(r, 8)}.${randomString(r, 8)}`;
      const [module, method] = action.split('.');
      const argv = r.bool(0.05) ? [] : [module ?? '', method ?? ''];
      for (let k = 0, n = r.int(5); k < n; k++) {
        const flag = r.pick([`--${r.pick(FIELD_NAMES).replace(/_/g, '-')}`, `--${randomString(r, 6)}`, '--credential', '--token=x', '-x', '--']);
        argv.push(flag);
        if (r.bool(0.8)) {
          const v = randomJson(r);
          argv.push(r.bool(0.1) ? `x${creds[0]}` : typeof v === 'string' ? v : JSON.stringify(v) ?? 'null');
        }
      }
      const stdin = r.pick([JSON.stringify(randomJson(r)), JSON.stringify({ mode: 'day', date: '2026-04-21', key: 'k', content: randomString(r) }), randomString(r, 100), '']);
      const credential = r.pick(creds);
      const env: Record<string, string> = { TOOLGATE_DB: db, ...(credential ? { PROJECT_CLI_CREDENTIAL: credential } : {}) };
      if (r.bool(0.2)) env.PROJECT_CLI_VERIFY_KEY = r.pick([JSON.stringify(foreign.publicJwk), '{}', 'null', randomString(r)]);
      batch.push(
        run(PROJECT_CLI_BIN, argv, env, stdin).then((out) => {
          const context = `project-cli ${JSON.stringify(argv).slice(0, 200)}`;
          if (out.code === 0 && out.stdout.includes('input_schema') === false && argv.includes('--help')) return;
          assert.ok(out.stdout.endsWith('\n') && !out.stdout.slice(0, -1).includes('\n'), `${context}: one line on stdout: ${out.stdout.slice(0, 300)} ${out.stderr.slice(0, 300)}`);
          const doc = JSON.parse(out.stdout) as { ok: boolean; error?: { code: ToolErrorCode } };
          if (doc.ok) assert.equal(out.code, 0, context);
          else {
            assert.notEqual(doc.error!.code, 'INTERNAL', `${context}: ${out.stdout.slice(0, 300)}`);
            assert.equal(out.code, exitCodeFor(doc.error!.code), `${context}: exit code of ${doc.error!.code}`);
          }
          assertNoSecret(out.stdout + out.stderr, marks, context);
          assert.doesNotMatch(out.stderr, /\n\s+at /, `${context}: no stack trace`);
        }),
      );
      if (batch.length >= 3) await Promise.all(batch.splice(0));
    }
    await Promise.all(batch);
    assertNoSecretInDbFiles(dir, marks);
  }),
);

/** Random edits of a JSON value: replace, delete or add at a random path. */
function mutate(rng: Rng, value: unknown, depth = 0): unknown {
  if (depth > 4 || rng.bool(0.2)) return rng.bool(0.5) ? randomJson(rng) : value;
  if (Array.isArray(value)) {
    const copy = value.map((v) => (rng.bool(0.3) ? mutate(rng, v, depth + 1) : v));
    if (rng.bool(0.2)) copy.push(randomJson(rng));
    return copy;
  }
  if (value && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (rng.bool(0.1)) continue;
      copy[k] = rng.bool(0.4) ? mutate(rng, v, depth + 1) : v;
    }
    if (rng.bool(0.25)) {
      const key = rng.pick(['limits', 'store', 'auth', 'http', 'mcp', 'agents', 'reader', 'max_message_bytes', 'max_sessions_per_connection',
        'max_token_lifetime_s', 'synchronous', 'allowed_origins', 'agent', 'enabled_skills', 'allowed_actions', randomString(rng, 8)]);
      copy[key] = rng.bool(0.5) ? randomJson(rng) : { [rng.pick(['max_in_flight', 'call_timeout_ms', 'pool_size', 'agent'])]: randomJson(rng) };
    }
    return copy;
  }
  return value;
}

test(`config files: loaded or refused with a ConfigError, never a crash (seed ${SEED})`, slowSuite({ timeout: 150_000 }), () =>
  withSeed('config files', async () => {
    const rng = new Rng(SEED ^ 0xc0f);
    const dir = tempDir('toolgate-fuzz-cfg-');
    const skills = discoverSkills();
    const full = {
      ...DEFAULT_CONFIG,
      limits: { max_message_bytes: 1024, max_sessions_per_connection: 2, max_subscriptions_per_connection: 3, call_timeout_ms: 1000 },
      store: { synchronous: 'NORMAL' }, auth: { max_token_lifetime_s: 60 }, http: { allowed_origins: ['http://localhost'] },
    };
    let loaded = 0;
    const refusedTexts: string[] = [];
    for (let i = 0; i < CONFIGS; i++) {
      const r = rng.fork(i);
      const file = join(dir, `c${i % 8}.json`);
      const text = r.bool(0.05) ? randomString(r, 200) : JSON.stringify(mutate(r, full));
      writeFileSync(file, text);
      try {
        loadConfig(file, skills);
        loaded++;
      } catch (err) {
        assert.ok(err instanceof ConfigError, `config ${text.slice(0, 300)} threw ${String(err)}`);
        assert.ok(err.message.startsWith(`config ${file}`), `the error names the file: ${err.message}`);
        if (refusedTexts.length < SERVE_CONFIGS) refusedTexts.push(text);
      }
    }
    assert.ok(loaded > 0 && refusedTexts.length > 0, `both outcomes seen (${loaded} loaded)`);
    for (const [i, text] of refusedTexts.entries()) {
      const file = join(dir, `serve-${i}.json`);
      writeFileSync(file, text);
      const out = await run(TOOLGATE_BIN, ['serve', '--stdio', '--db', join(dir, 'toolgate.db'), '--config', file], { PATH: process.env.PATH ?? '', TOOLGATE_HOME: tempDir(), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET }, '');
      assert.notEqual(out.code, 0, `serve refuses ${text.slice(0, 200)}`);
      assert.equal(out.stdout, '', 'nothing on the protocol stream');
      assert.match(out.stderr, /config /);
      assert.doesNotMatch(out.stderr, /\n\s+at |crashed/, `no stack: ${out.stderr.slice(0, 500)}`);
    }
  }),
);
