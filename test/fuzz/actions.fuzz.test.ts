/**
 * Fuzz: every action's input through `tool/invoke` (stdio, in-process
 * executor so hundreds of calls stay quick). Inputs are built from the
 * action's own field names with plausible and hostile values — real ids from
 * earlier calls, dates of every year, bad zones, batches past the limit,
 * secrets pasted anywhere, NUL and lone surrogates in any string, page
 * limits and cursors (real, altered, made up).
 * Invariants: every answer is a structured ToolResponse (never INTERNAL)
 * preceded by a final `tool/result`; a pasted secret is always
 * UNAUTHENTICATED; a NUL or lone surrogate is always INVALID_ACTION_INPUT
 * and nothing holding one (nor its U+FFFD rewrite) is stored; no success
 * is over 1 MiB or 500 items; the daemon
 * answers the next call; no secret in any wire message, stderr or database
 * file (`-wal`/`-shm` too).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ACTION_NAMES } from '../../src/cli-router/registry.js';
import { startHost, openSession } from '../helpers/host.js';
import { TEST_BEARER_SECRET, mintBearer } from '../helpers/tokens.js';
import { Rng, SEED, randomJson, randomString, taint, withSeed } from './prng.js';
import { findMalformedString } from '../../src/codec/well-formed.js';
import { storedText } from '../helpers/db.js';
import { assertCleanStderr, assertNoSecret, assertNoSecretInDbFiles, assertToolResponse } from './invariants.js';
import { slowSuite } from '../helpers/quick.js';

const PER_ACTION = 30;

const FIELDS: Record<string, string[]> = {
  'calendar.read': ['mode', 'date', 'timezone', 'start_at', 'end_at', 'event_id', 'limit', 'cursor'],
  'calendar.create': ['title', 'start_at', 'end_at', 'location', 'description', 'items'],
  'calendar.update': ['event_id', 'title', 'start_at', 'end_at', 'location', 'description'],
  'calendar.delete': ['event_id'],
  'calendar.share': ['event_id', 'user_ids'],
  'calendar.accept_invite': ['invite_id'],
  'calendar.reject_invite': ['invite_id'],
  'contacts.read': ['query', 'phone', 'limit'],
  'memory.update': ['key', 'content'],
  'memory.forget': ['key'],
  'memory.read': ['key', 'limit', 'cursor'],
};

test(`every action's input, ${PER_ACTION} random inputs each: structured, never INTERNAL, no secret stored (seed ${SEED})`, slowSuite({ timeout: 150_000 }), () =>
  withSeed('action inputs', async () => {
    assert.deepEqual(Object.keys(FIELDS).sort(), [...ACTION_NAMES].sort(), 'every action is fuzzed');
    const rng = new Rng(SEED ^ 0xac710);
    const token = await mintBearer('fuzz-alice', { phone: '+15550001' });
    const other = await mintBearer('fuzz-bob', { phone: '+15550002' });
    const marks = [token.split('.')[2]!, other.split('.')[2]!, TEST_BEARER_SECRET];
    const host = await startHost({ args: ['--executor', 'inprocess'] });
    const eventIds: string[] = ['evt_missing'];
    const inviteIds: string[] = ['inv_missing'];
    const cursors: string[] = [];
    try {
      const s = await openSession(host, token);
      await openSession(host, other);
      const secret = () => rng.pick([`x${token}`, `auth_${other}`, ` ${token} `, `pw=${TEST_BEARER_SECRET}`]);
      const instant = (r: Rng) => r.pick([
        '2026-04-21T10:00:00+08:00', '2026-04-21T11:00:00Z', `${String(r.int(10000)).padStart(4, '0')}-0${1 + r.int(9)}-1${r.int(9)}T0${r.int(9)}:00:00Z`,
        '2026-04-21T10:00:00', '2026-13-01T00:00:00Z', randomString(r),
      ]);
      const value = (r: Rng, field: string): unknown => {
        if (r.bool(0.1)) return randomJson(r);
        switch (field) {
          case 'mode': return r.pick(['day', 'range', 'event', 'week', '']);
          case 'date': return r.pick(['2026-04-21', '0050-01-01', '0000-01-01', '9999-12-31', '2026-02-30', randomString(r)]);
          case 'timezone': return r.pick(['UTC', 'Asia/Shanghai', 'America/Havana', 'Pacific/Kiritimati', 'asia/shanghai', 'Mars/Base', '']);
          case 'start_at': case 'end_at': return instant(r);
          case 'event_id': return r.pick(eventIds);
          case 'invite_id': return r.pick(inviteIds);
          case 'user_ids': return r.pick([['fuzz-bob'], ['fuzz-bob', 'fuzz-alice'], ['nobody'], [], Array(60).fill('fuzz-bob')]);
          case 'items': return Array.from({ length: r.pick([0, 1, 3, 50, 51]) }, () => ({ title: randomString(r, 20), start_at: instant(r), end_at: instant(r) }));
          case 'limit': return r.pick([1, 0, -1, 2, 100, 500, 501, 1.5, '10']);
          // Real cursors of earlier pages, and made-up or altered ones (never a database error).
          case 'cursor': return r.pick([...cursors, 'x', '%%', Buffer.from('["a\\u0000"]').toString('base64url'), Buffer.from('[1e400,"e"]').toString('base64url'), randomString(r)]);
          case 'phone': return r.pick(['+15550002', '+15550001', randomString(r)]);
          default: return randomString(r, 60);
        }
      };

      let n = 0;
      for (const action of ACTION_NAMES) {
        const [module, method] = action.split('.') as [string, string];
        for (let i = 0; i < PER_ACTION; i++) {
          const r = rng.fork(n++);
          const input: Record<string, unknown> = {};
          for (const f of FIELDS[action]!) if (r.bool(0.7)) input[f] = value(r, f);
          if (r.bool(0.1)) input[randomString(r, 10) || 'extra'] = randomJson(r);
          const pasted = r.bool(0.1);
          if (r.bool(0.08)) input[r.pick(FIELDS[action]!)] = taint(r, randomString(r, 20));
          if (pasted) input[r.pick(FIELDS[action]!)] = secret();
          const malformed = findMalformedString(input) !== null;
          const before = host.wire.length;
          const result = await host.request('tool/invoke', {
            session_id: s.session_id, thread_id: `fz-${r.int(3)}`, tool_call_id: `c${n}`, args: { module, method, input },
          });
          const { status, text } = assertToolResponse(result, `${action} ${JSON.stringify(input).slice(0, 300)}`);
          if (pasted) assert.equal(text.error?.code, 'UNAUTHENTICATED', `a pasted secret is refused (${action})`);
          // A credential field (`token`, `auth`…) in random JSON is refused first, as UNAUTHENTICATED.
          else if (malformed) assert.ok(['INVALID_ACTION_INPUT', 'UNAUTHENTICATED'].includes(text.error?.code), `a NUL or lone surrogate is refused (${action})`);
          const finals = host.wire.slice(before).filter((e) => e.method === 'tool/result' && (e.payload as { final?: boolean }).final);
          assert.equal(finals.length, 1, 'one final tool/result per call');
          if (status !== 'failure') {
            const data = text.data as { event?: { id: string }; items?: Array<{ event?: { id: string }; id?: string }>; invites?: Array<{ invite_id: string }> };
            if (data.event?.id) eventIds.push(data.event.id);
            for (const it of data.items ?? []) if (it.event?.id) eventIds.push(it.event.id);
            for (const inv of data.invites ?? []) inviteIds.push(inv.invite_id);
            const next = (text.data as { next_cursor?: unknown }).next_cursor;
            if (typeof next === 'string') cursors.push(next);
            // Result sizes: a success is never over the bound (1 MiB here), and a page never over 500 items.
            assert.ok(Buffer.byteLength(JSON.stringify(text)) <= 1_048_576, 'a result within limits.max_result_bytes');
            assert.ok((data.items?.length ?? 0) <= 500, 'a page holds at most 500 items');
          }
        }
      }
      // Still answering.
      const last = await host.request('tool/invoke', {
        session_id: s.session_id, thread_id: 'fz-end', tool_call_id: 'end', args: { module: 'memory', method: 'read', input: {} },
      });
      assert.equal(assertToolResponse(last, 'final call').status, 'success');
      assertNoSecret(JSON.stringify(host.wire), marks, 'the wire');
      assertNoSecretInDbFiles(host.dataDir, marks);
      // Nothing malformed was stored, nor rewritten: no U+FFFD (as UTF-8 bytes read as latin1 on SQLite, as text on PostgreSQL).
      for (const text of await storedText(host.dbPath, host.dataDir)) {
        assert.ok(!text.includes('\u00ef\u00bf\u00bd') && !text.includes('\ufffd'), 'no U+FFFD stored');
      }
    } finally {
      await host.stop();
    }
    assertNoSecretInDbFiles(host.dataDir, marks);
    assertCleanStderr(host.stderr(), marks);
  }),
);
