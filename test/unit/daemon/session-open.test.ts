/**
 * `session/open` (src/sessions/session-open.ts) in process: a good token
 * opens a session for its `sub` with the agent profile's skills and
 * whitelist; a forged, expired or over-long token, a params object of the
 * wrong shape, an unknown profile or a skill outside the profile are each
 * refused with their own structured error, and nothing of the token is in
 * the error or the log.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResponseError } from 'vscode-jsonrpc';
import { startInProcess, type InProcessHost } from '../../helpers/in-process.js';
import { tempDir } from '../../helpers/repo.js';
import { mintBearer } from '../../helpers/tokens.js';
import { MAX_BEARER_TOKEN_LENGTH } from '../../../src/protocol/limits.js';
import type { SessionOpenResult } from '../../../src/protocol/index.js';

const AGENTS = {
  default: { enabled_skills: ['calendar', 'memory'], allowed_actions: ['calendar.read', 'memory.read'] },
  planner: { enabled_skills: ['calendar'], allowed_actions: ['calendar.create', 'calendar.read'] },
};

type RpcError = ResponseError<{ code?: string; issues?: unknown[] } | undefined>;

describe('session/open', () => {
  let host: InProcessHost;
  before(async () => {
    const dataDir = tempDir();
    const config = join(dataDir, 'toolgate.config.json');
    writeFileSync(config, JSON.stringify({ agents: AGENTS }), { mode: 0o600 });
    host = await startInProcess({ dataDir, args: ['--config', config] });
    await host.request('initialize', { protocol_version: '1', client_info: { name: 'session-open', version: '1' } });
  });
  after(() => host.stop());

  const open = (params: unknown) => host.request<SessionOpenResult>('session/open', params);
  const refusal = (params: unknown) => open(params).then(() => assert.fail('session/open should have been refused'), (err: RpcError) => err);

  test('a good token opens a session for its sub with the default profile', async () => {
    const s = await open({ auth: { type: 'bearer', token: await mintBearer('olga') } });
    assert.equal(s.user_id, 'olga');
    assert.match(s.session_id, /.+/);
    assert.deepEqual(s.enabled_skills, AGENTS.default.enabled_skills);
    assert.deepEqual(s.allowed_actions, AGENTS.default.allowed_actions);
    // The session works: the user's (empty) thread list.
    assert.deepEqual(await host.request('thread/list', { session_id: s.session_id }), { threads: [], next_cursor: null });
  });

  test('a named profile gives its own skills and whitelist; enabled_skills narrows them', async () => {
    const token = await mintBearer('olga');
    const planner = await open({ auth: { type: 'bearer', token }, agent: 'planner' });
    assert.deepEqual([planner.enabled_skills, planner.allowed_actions], [['calendar'], ['calendar.create', 'calendar.read']]);
    const narrowed = await open({ auth: { type: 'bearer', token }, enabled_skills: ['memory'] });
    assert.deepEqual(narrowed.enabled_skills, ['memory']);
  });

  test('an unknown profile is -32602 UNKNOWN_AGENT; a skill outside the profile is -32602 SKILL_NOT_ENABLED', async () => {
    const token = await mintBearer('olga');
    const unknown = await refusal({ auth: { type: 'bearer', token }, agent: 'root' });
    assert.equal(unknown.code, -32602);
    assert.equal(unknown.data?.code, 'UNKNOWN_AGENT');
    const wider = await refusal({ auth: { type: 'bearer', token }, agent: 'planner', enabled_skills: ['calendar', 'memory'] });
    assert.equal(wider.code, -32602);
    assert.equal(wider.data?.code, 'SKILL_NOT_ENABLED');
    assert.match(wider.message, /memory/);
  });

  test('a forged or an expired token is -32001, never echoed', async () => {
    const forged = await mintBearer('olga', {}, { secret: 'another-secret-another-secret-000' });
    const expired = await mintBearer('olga', {}, { expiresIn: Math.floor(Date.now() / 1000) - 60 });
    for (const token of [forged, expired, 'not-a-jwt']) {
      const err = await refusal({ auth: { type: 'bearer', token } });
      assert.equal(err.code, -32001, `${token.slice(0, 12)}…: ${err.message}`);
      assert.ok(!JSON.stringify({ m: err.message, d: err.data }).includes(token), 'the token is not echoed');
      assert.ok(!host.stderr().includes(token), 'the token is not logged');
    }
  });

  test('a token longer than the limit is refused by the params schema, not verified', async () => {
    const long = `${await mintBearer('olga')}${'a'.repeat(MAX_BEARER_TOKEN_LENGTH)}`;
    const err = await refusal({ auth: { type: 'bearer', token: long } });
    assert.equal(err.code, -32602);
    assert.ok(Array.isArray(err.data?.issues), 'data.issues says what is wrong');
    assert.ok(!JSON.stringify({ m: err.message, d: err.data }).includes(long.slice(0, 200)), 'the token is not echoed');
  });

  test('params of the wrong shape are -32602 with data.issues', async () => {
    for (const params of [{}, { auth: { type: 'password', token: 'x' } }, { auth: { type: 'bearer' } }, { auth: { type: 'bearer', token: 'x' }, extra: 1 }, { auth: { type: 'bearer', token: '' } }]) {
      const err = await refusal(params);
      assert.equal(err.code, -32602, JSON.stringify(params));
      assert.ok(Array.isArray(err.data?.issues) && err.data.issues.length > 0, `${JSON.stringify(params)}: data.issues`);
    }
  });
});
