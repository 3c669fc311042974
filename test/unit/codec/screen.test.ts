import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { screenClean } from '../../../src/codec/screen.js';
import { findSecretIn } from '../../../src/codec/secret-scan.js';
import { findMalformedString } from '../../../src/codec/well-formed.js';
import { offersCredential } from '../../../src/codec/redact.js';
import { splitVariants } from '../../helpers/split-tokens.js';

const jwt = () => new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode('k'.repeat(32)));
const SECRET = 'configured-secret-value';

/** What the exact checks say of a value: whether any of them would refuse it. */
function anyCheckFires(value: unknown, secrets: readonly string[]): boolean {
  return findSecretIn(value, secrets) !== null || findMalformedString(value) !== null || offersCredential(value, secrets);
}

/** The value at the end of `path` (dotted keys) replaced by `leaf`, in a copy of a typical call's params. */
function paramsWith(where: 'thread_id' | 'title' | 'item' | 'key' | 'meta', leaf: string): Record<string, unknown> {
  const input: Record<string, unknown> = { title: 'Team sync', start_at: '2026-04-21T10:00:00+08:00', end_at: '2026-04-21T11:00:00+08:00', items: [{ n: 1, tags: ['a', 'b'] }] };
  const params: Record<string, unknown> = { session_id: 's1', thread_id: 't1', tool_call_id: 'c1', args: { module: 'calendar', method: 'create', input } };
  if (where === 'thread_id') params.thread_id = leaf;
  if (where === 'title') input.title = leaf;
  if (where === 'item') ((input.items as Array<{ tags: string[] }>)[0]!.tags as string[]).push(leaf);
  if (where === 'key') input[leaf] = 1;
  if (where === 'meta') params._meta = { traceparent: leaf };
  return params;
}

test('a clean request is screened clean, and none of the exact checks fires on it', () => {
  const params = paramsWith('title', 'Team sync at 10.30.45 — config.yaml.bak v1.2.3 😀');
  assert.equal(screenClean(params, [SECRET]), true);
  assert.equal(anyCheckFires(params, [SECRET]), false);
});

test('whatever one of the exact checks refuses, anywhere in the params, the screen flags', async () => {
  const token = await jwt();
  const leaves = [token, `x${token}y`, ...Object.values(splitVariants(token)), `a ${SECRET} b`, 'nul\u0000here', 'lone \ud800 surrogate', 'low \udc00 first'];
  for (const where of ['thread_id', 'title', 'item', 'key', 'meta'] as const) {
    for (const leaf of leaves) {
      const params = paramsWith(where, leaf);
      assert.equal(anyCheckFires(params, [SECRET]), true, `a check fires (${where}: ${JSON.stringify(leaf).slice(0, 30)})`);
      assert.equal(screenClean(params, [SECRET]), false, `screened (${where}: ${JSON.stringify(leaf).slice(0, 30)})`);
    }
  }
});

test('a key that names a credential field, in any case and at any depth, is flagged', () => {
  for (const key of ['token', 'Credential', 'ACCESS_TOKEN', 'api_key', 'jwt', 'bearer', 'project_cli_credential']) {
    assert.equal(screenClean(paramsWith('key', key), []), false, key);
    assert.equal(screenClean({ args: { input: { deep: [{ [key]: 'x' }] } } }, []), false, `${key}, nested`);
  }
});

test('the top-level keys it is told to skip are not looked at; nothing else is skipped', async () => {
  const token = await jwt();
  assert.equal(screenClean({ auth: { type: 'bearer', token } }, [], ['auth']), true);
  assert.equal(screenClean({ auth: { type: 'bearer', token } }, []), false);
  assert.equal(screenClean({ auth: {}, agent: token }, [], ['auth']), false);
});

test('scalars and deep values are walked without recursion', () => {
  assert.equal(screenClean('plain', []), true);
  assert.equal(screenClean('bad\u0000', []), false);
  let deep: unknown = 'leaf\u0000';
  for (let i = 0; i < 100_000; i++) deep = [deep];
  assert.equal(screenClean({ args: deep }, []), false);
});
