/**
 * A new in-process call on SQLite runs its writes only: it does not read its
 * stored tool message or call record first (`Tx.assumeNewCall`). A call stored
 * before still answers from the store — its unit's record write fails on the
 * unique key, is undone whole, and the stored answer is read — and an id
 * reused with other arguments is still refused; neither stores anything new.
 * In process (the real stdio transport over an in-memory pair), on a SQLite
 * file whatever the suite's engine.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startInProcess } from '../../helpers/in-process.js';
import { openSession } from '../../helpers/host.js';
import { tempDir } from '../../helpers/repo.js';
import { mintBearer } from '../../helpers/tokens.js';

type Run = (...args: unknown[]) => unknown;

/** Records the SQL of every statement better-sqlite3 runs in this process while `work` runs. */
async function statementsOf<T>(work: () => Promise<T>): Promise<{ value: T; sql: string[] }> {
  const scratch = new Database(':memory:');
  const proto = Object.getPrototypeOf(scratch.prepare('SELECT 1')) as Record<'run' | 'get' | 'all', Run>;
  scratch.close();
  const originals = { run: proto.run, get: proto.get, all: proto.all };
  const sql: string[] = [];
  for (const m of ['run', 'get', 'all'] as const) {
    proto[m] = function (this: { source: string }, ...args: unknown[]) {
      sql.push(this.source.replace(/\s+/g, ' ').trim());
      return originals[m].apply(this, args);
    };
  }
  try {
    return { value: await work(), sql };
  } finally {
    Object.assign(proto, originals);
  }
}

const args = (title: string) => ({ module: 'calendar', method: 'create', input: { title, start_at: '2026-10-01T09:00:00Z', end_at: '2026-10-01T10:00:00Z' } });
type Answer = { status: string; content: Array<{ text: string }> };

test('SQLite, in process: a new call reads nothing first; a stored one still answers from the store, storing nothing new', async () => {
  const dataDir = tempDir();
  const host = await startInProcess({ dataDir, db: join(dataDir, 'toolgate.db') });
  try {
    const { session_id } = await openSession(host, await mintBearer('alice'));
    const invoke = (id: string, a: ReturnType<typeof args>) => host.request<Answer>('tool/invoke', { session_id, thread_id: 't', tool_call_id: id, args: a });
    await invoke('warm', args('warm-up'));
    const count = (sql: string) => (host.services.store as unknown as { connection: Database.Database }).connection.prepare(sql).pluck().get() as number;

    const fresh = await statementsOf(() => invoke('c1', args('Once')));
    assert.equal(fresh.value.status, 'success');
    const reads = fresh.sql.filter((s) => /^SELECT\b/i.test(s) && /\bFROM (messages|tool_calls)\b/i.test(s));
    assert.deepEqual(reads, [], 'no read of the stored answer before the writes');

    const replay = await statementsOf(() => invoke('c1', args('Once')));
    assert.equal(replay.value.content[0]!.text, fresh.value.content[0]!.text, 'the retry answers the same bytes');
    assert.ok(replay.sql.some((s) => /^SELECT .* FROM messages\b/i.test(s)), 'answered from the stored tool message');

    const other = await invoke('c1', args('Other'));
    assert.equal(other.status, 'failure');
    assert.equal((JSON.parse(other.content[0]!.text) as { error: { code: string } }).error.code, 'DUPLICATE_TOOL_CALL_ID');

    assert.equal(count("SELECT count(*) FROM events WHERE title IN ('Once', 'Other')"), 1, 'one event: the retry and the reuse ran nothing that stayed');
    assert.equal(count("SELECT count(*) FROM tool_calls WHERE tool_call_id = 'c1'"), 1, 'one call record');
    assert.equal(count("SELECT count(*) FROM credential_audit WHERE tool_call_id = 'c1'"), 1, 'one audit row: the undone units left none');
    assert.equal(count("SELECT count(*) FROM messages WHERE tool_call_id = 'c1'"), 1, 'one tool message');
  } finally {
    await host.stop();
  }
});

test('SQLite, in process: a stored refusal (no call record) and twins in one group still answer once, storing nothing twice', async () => {
  const dataDir = tempDir();
  const host = await startInProcess({ dataDir, db: join(dataDir, 'toolgate.db') });
  try {
    const { session_id } = await openSession(host, await mintBearer('alice'));
    const invoke = (id: string, a: unknown) => host.request<Answer>('tool/invoke', { session_id, thread_id: 't', tool_call_id: id, args: a });
    const count = (sql: string) => (host.services.store as unknown as { connection: Database.Database }).connection.prepare(sql).pluck().get() as number;
    const codeOf = (a: Answer) => (JSON.parse(a.content[0]!.text) as { error: { code: string } | null }).error?.code;

    // An unknown action is refused and stored as the call's outcome, with no call record: the admitted retry's
    // record write succeeds, its tool message's unique key does not — the unit is undone, the refusal stands.
    const refused = await invoke('r1', { module: 'calendar', method: 'no_such_method', input: {} });
    assert.equal(codeOf(refused), 'UNKNOWN_ACTION');
    const reused = await invoke('r1', args('Reused'));
    assert.equal(codeOf(reused), 'DUPLICATE_TOOL_CALL_ID');
    assert.equal(count("SELECT count(*) FROM events WHERE title = 'Reused'"), 0, 'the undone unit left no event');
    assert.equal(count("SELECT count(*) FROM tool_calls WHERE tool_call_id = 'r1'"), 0, 'nor a call record');

    // Twins sent together land in one group: the second's unit fails on the first's keys and is answered from it.
    const [a, b] = await Promise.all([invoke('twin', args('Twin')), invoke('twin', args('Twin'))]);
    assert.equal(a.status, 'success');
    assert.equal(b.content[0]!.text, a.content[0]!.text, 'both twins answer the same bytes');
    assert.equal(count("SELECT count(*) FROM events WHERE title = 'Twin'"), 1, 'one event');
    assert.equal(count("SELECT count(*) FROM messages WHERE tool_call_id = 'twin'"), 1, 'one tool message');
  } finally {
    await host.stop();
  }
});
