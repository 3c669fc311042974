/**
 * An approved call whose daemon dies while it runs (contract sections 16 and
 * 17), from outside: the daemon and its project-cli child are killed
 * (SIGKILL) while the approved `calendar.delete` waits for a database lock,
 * before anything of it committed. The next daemon on the same database ends
 * the call at start — `done`, the failure INTERNAL saying so, nothing run —
 * and a re-invocation with the same id and args returns that outcome rather
 * than wait for ever. A daemon ends such a call only once it is older than
 * its run could be (time limit, kill grace, clock margin: recovery.ts), so a
 * live runner elsewhere is never cut short: first a daemon started within
 * that time leaves it running, then one started once the call is older (its
 * stored start moved back past that time, rather than waited for) ends it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { setImmediate as turn } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { openSession, startHost, type Host } from '../helpers/host.js';
import { startInProcess } from '../helpers/in-process.js';
import { pgQuery } from '../helpers/pg.js';
import { mintBearer } from '../helpers/tokens.js';
import { tempDir } from '../helpers/repo.js';
import { dbCount, dbRows } from '../helpers/db.js';
import { waitFor } from '../helpers/wait-for.js';
import { holdWriteLock } from '../helpers/write-lock.js';
import { askConfig } from '../helpers/approval-config.js';
import { RUN_MARGIN_MS } from '../../src/calls/recovery.js';
import type { CallGetResult, ToolApprovalNotification, ToolResponse } from '../../src/protocol/index.js';

const isPg = (db: string) => /^postgres(ql)?:\/\//i.test(db);

/** The processes whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // Field 4 of stat is the parent; the command name (field 2) may hold spaces, so read after its ')'.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(name));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** Kills the daemon and the project-cli children it started, as a crash of the machine would: nothing finishes. */
async function killHard(host: Host): Promise<void> {
  const pid = host.proc.pid!;
  process.kill(pid, 'SIGSTOP'); // frozen: it starts no child while its children are found
  for (const child of childrenOf(pid)) process.kill(child, 'SIGKILL');
  host.proc.kill('SIGKILL');
  await host.exited.catch(() => {});
}

/**
 * Approves the call so that its run blocks before it writes anything: PostgreSQL, the events table is
 * locked first (the approval itself does not touch it); SQLite, the write lock is taken the moment the
 * call is stored `running` (project-cli, still starting, has written nothing yet).
 */
async function approveIntoLock(host: Host, approve: () => Promise<unknown>): Promise<() => Promise<void>> {
  if (isPg(host.dbPath)) {
    const release = await holdWriteLock(host.dbPath);
    void approve().catch(() => {});
    await waitFor(async () => (await dbCount(host.dbPath, "SELECT count(*) AS n FROM calls WHERE tool_call_id = 'del' AND state = 'running'")) === 1 || undefined, 'the call approved');
    return release;
  }
  const conn = new Database(host.dbPath, { timeout: 10_000 });
  const running = conn.prepare("SELECT count(*) AS n FROM calls WHERE tool_call_id = 'del' AND state = 'running'");
  void approve().catch(() => {});
  const deadline = Date.now() + 15_000;
  while ((running.get() as { n: number }).n === 0) {
    if (Date.now() > deadline) throw new Error('the call was never approved');
    await turn();
  }
  conn.exec('BEGIN IMMEDIATE');
  const recorded = (conn.prepare("SELECT count(*) AS n FROM tool_calls WHERE tool_call_id = 'del'").get() as { n: number }).n;
  assert.equal(recorded, 0, 'the lock was taken before the approved call wrote anything');
  return async () => {
    conn.exec('ROLLBACK');
    conn.close();
  };
}

/** Sets the stored approval time of the call `del` (the time its run started). */
async function backdate(db: string, at: string): Promise<void> {
  if (isPg(db)) {
    await pgQuery(db, "UPDATE calls SET updated_at = $1 WHERE tool_call_id = 'del'", [at]);
    return;
  }
  const conn = new Database(db, { timeout: 10_000 });
  try {
    conn.prepare("UPDATE calls SET updated_at = ? WHERE tool_call_id = 'del'").run(at);
  } finally {
    conn.close();
  }
}

test('an approved call whose daemon dies mid-run is ended at the next start: done, INTERNAL, nothing run; re-invoking returns it', { timeout: 90_000 }, async () => {
  const dataDir = tempDir();
  // Short limits for the call under test: its run limit is 1 s + 0.3 s grace + the margin. Its action's own
  // limit: the calendar.create before it keeps the default, so a loaded machine cannot time it out.
  const limits = { action_timeout_ms: { 'calendar.delete': 1_000 }, cancel_grace_ms: 300 };
  const args = ['--executor', 'subprocess', '--config', askConfig(limits)];
  const first = await startHost({ transport: 'ws', dataDir, args });
  const token = await mintBearer('alice');
  let eventId = '';
  const del = () => ({ module: 'calendar', method: 'delete', input: { event_id: eventId } });
  let release: (() => Promise<void>) | undefined;
  try {
    const { session_id } = await openSession(first, token);
    const created = await first.request<ToolResponse>('tool/invoke', {
      session_id,
      thread_id: 't',
      tool_call_id: 'create',
      args: { module: 'calendar', method: 'create', input: { title: 'outlives its daemon', start_at: '2026-10-10T08:00:00Z', end_at: '2026-10-10T09:00:00Z' } },
    });
    eventId = (JSON.parse(created.content[0]!.text) as { data: { event: { id: string } } }).data.event.id;
    void first.request('tool/invoke', { session_id, thread_id: 't', tool_call_id: 'del', args: del() }).catch(() => {});
    const asked = await waitFor(() => first.wire.find((e) => e.method === 'tool/approval')?.payload as ToolApprovalNotification | undefined, 'tool/approval');
    release = await approveIntoLock(first, () => first.request('call/approve', { session_id, thread_id: 't', tool_call_id: 'del', args_sha256: asked.args_sha256 }));
    await killHard(first);
  } finally {
    await release?.();
    if (first.proc.exitCode === null && first.proc.signalCode === null) await first.stop();
  }
  assert.equal(await dbCount(first.dbPath, "SELECT count(*) AS n FROM calls WHERE tool_call_id = 'del' AND state = 'running'"), 1, 'left running by the dead daemon');
  const [{ updated_at: approvedAt } = { updated_at: '' }] = await dbRows<{ updated_at: string }>(first.dbPath, "SELECT updated_at FROM calls WHERE tool_call_id = 'del'");
  const runLimitMs = limits.action_timeout_ms['calendar.delete'] + limits.cancel_grace_ms + RUN_MARGIN_MS;
  // The daemon that ends the call runs in this process: what is checked is what its start does to the
  // database, not the process (the first daemon above is the one whose death is under test).
  const restart = () => startInProcess({ dataDir, db: first.dbPath, args });

  // Within the call's run limit, a daemon that starts leaves it: its runner may be alive elsewhere.
  // Spawned: `serve` also sweeps at start (recovery included), which must leave a young call too.
  if (Date.now() < Date.parse(approvedAt) + runLimitMs - 2_000) {
    const early = await startHost({ transport: 'ws', dataDir, db: first.dbPath, args });
    try {
      assert.equal(await dbCount(early.dbPath, "SELECT count(*) AS n FROM calls WHERE tool_call_id = 'del' AND state = 'running'"), 1, 'not ended within its run limit');
      assert.equal(await dbCount(early.dbPath, "SELECT count(*) AS n FROM messages WHERE tool_call_id = 'del'"), 0);
    } finally {
      await early.stop();
    }
  }
  // The run limit passes without waiting for it: the row is made as old as a call approved just
  // over its run limit ago (recovery judges a call's age by this column alone).
  await backdate(first.dbPath, new Date(Date.now() - runLimitMs - 1_000).toISOString());

  const next = await restart();
  try {
    // Ended before the daemon served: stored, the row gone, nothing run.
    const [stored] = await dbRows<{ content: string }>(next.dbPath, "SELECT content FROM messages WHERE tool_call_id = 'del'");
    assert.ok(stored, 'the call is stored done at start');
    assert.equal((JSON.parse(stored!.content) as { error?: { code?: string } }).error?.code, 'INTERNAL', stored?.content);
    assert.equal(await dbCount(next.dbPath, "SELECT count(*) AS n FROM calls WHERE tool_call_id = 'del'"), 0);
    assert.equal(await dbCount(next.dbPath, 'SELECT count(*) AS n FROM events WHERE id = ?', [eventId]), 1, 'nothing ran');

    const { session_id } = await openSession(next, token);
    // Answered, or failed after waitFor's ceiling: a re-invocation must not wait. The ceiling ends with
    // the answer, so nothing is left polling to keep the file's process alive after the test.
    let answered = false;
    const invoked = next.request<ToolResponse>('tool/invoke', { session_id, thread_id: 't', tool_call_id: 'del', args: del() }).finally(() => (answered = true));
    const again = await Promise.race([invoked, waitFor(() => answered, 'the re-invocation to answer rather than wait').then(() => invoked)]);
    assert.equal(again.status, 'failure');
    assert.match(again.content[0]!.text, /"code":"INTERNAL".*stopped before its outcome was stored/);
    const got = await next.request<CallGetResult>('call/get', { session_id, thread_id: 't', tool_call_id: 'del' });
    assert.deepEqual([got.state, got.outcome], ['done', again]);
  } finally {
    await next.stop();
  }
});

// The subprocess executor: its child, still starting when the call is stored running, is what approveIntoLock
// holds at the lock (an in-process run takes the lock first). The cancel's path is the executor's either way.
test("the caller's $/cancelRequest stops its call once approved and running, as call/cancel does", { timeout: 60_000 }, async () => {
  // Contract section 16: the request's own cancel acts as call/cancel once the call runs. Here the call ran only
  // after its approval: the cancel used to end nothing (it looked only for the call awaiting approval), and the
  // delete committed once the lock came free.
  const host = await startHost({ transport: 'ws', args: ['--executor', 'subprocess', '--config', askConfig()] });
  let release: (() => Promise<void>) | undefined;
  try {
    const { session_id } = await openSession(host, await mintBearer('alice'));
    const created = await host.request<ToolResponse>('tool/invoke', {
      session_id,
      thread_id: 't',
      tool_call_id: 'create',
      args: { module: 'calendar', method: 'create', input: { title: 'kept by a cancel', start_at: '2026-10-10T08:00:00Z', end_at: '2026-10-10T09:00:00Z' } },
    });
    const eventId = (JSON.parse(created.content[0]!.text) as { data: { event: { id: string } } }).data.event.id;
    const { CancellationTokenSource } = await import('vscode-jsonrpc');
    const cts = new CancellationTokenSource();
    const key = { session_id, thread_id: 't', tool_call_id: 'del' };
    const invoked = host.rpc.sendRequest<ToolResponse>('tool/invoke', { ...key, args: { module: 'calendar', method: 'delete', input: { event_id: eventId } } }, cts.token);
    // Awaited below; a failure before then must report itself, not this request's end at the host's stop.
    invoked.catch(() => {});
    const asked = await waitFor(() => host.wire.find((e) => e.method === 'tool/approval')?.payload as ToolApprovalNotification | undefined, 'tool/approval');
    let approved: Promise<unknown> | undefined;
    release = await approveIntoLock(host, () => {
      approved = host.request('call/approve', { ...key, args_sha256: asked.args_sha256 });
      approved.catch(() => {});
      return approved;
    });
    assert.equal((await host.request<CallGetResult>('call/get', key)).state, 'running');
    const before = host.stderr().length;
    cts.cancel();
    // The stop took effect while the lock is still held (its child gone, or its unit's wait for the lock given
    // up): nothing of the delete can commit first.
    await waitFor(() => host.stderr().slice(before).includes('"tool call stopped"'), () => `the call to stop\n${host.stderr().slice(-1500)}`);
    await release();
    release = undefined;
    const answer = await invoked;
    assert.equal(answer.status, 'failure');
    assert.match(answer.content[0]!.text, /"code":"CANCELLED"/);
    assert.deepEqual(((await approved) as CallGetResult).outcome, answer, 'the approver hears the same outcome');
    assert.equal(await dbCount(host.dbPath, 'SELECT count(*) AS n FROM events WHERE id = ?', [eventId]), 1, 'the delete never committed');
  } finally {
    await release?.();
    await host.stop();
  }
});
