/**
 * Contract §20, reloading the configuration on SIGHUP, from outside: the
 * daemon is spawned with a config file, the file is edited, the process gets
 * SIGHUP, and once its reload line is logged the new profiles hold — for
 * sessions already open too. A file that does not validate changes nothing
 * and says why in one line; /metrics counts both.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectWs, openSession, startHost, type Host } from '../helpers/host.js';
import { mintBearer, TEST_BEARER_SECRET } from '../helpers/tokens.js';
import { TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { holdWriteLock } from '../helpers/write-lock.js';
import Database from 'better-sqlite3';
import { waitFor } from '../helpers/wait-for.js';
import { dbRows } from '../helpers/db.js';
import type { ToolResponse } from '../../src/protocol/index.js';

const SKILLS = ['calendar', 'contacts', 'memory'];
const create = (title: string) => ({ module: 'calendar', method: 'create', input: { title, start_at: '2026-10-01T09:00:00Z', end_at: '2026-10-01T10:00:00Z' } });
const read = { module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-10-01' } };
const code = (r: ToolResponse) => {
  const b = JSON.parse(r.content[0]!.text) as { status: string; error?: { code: string } };
  return b.error?.code ?? b.status;
};

/** The daemon's log lines about reloads. */
const reloadLines = (h: Host) => h.stderr().split('\n').filter((l) => /"msg":"config reload/.test(l));

/** Sends SIGHUP and waits for the reload's one log line (the n-th). */
async function hangUp(h: Host, n: number): Promise<string> {
  h.proc.kill('SIGHUP');
  return waitFor(() => reloadLines(h)[n - 1], () => `reload line ${n}; log:\n${h.stderr().slice(-2000)}`);
}

async function metric(h: Host, result: 'ok' | 'rejected'): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${h.port}/metrics`)).text();
  const m = new RegExp(`^toolgate_config_reloads_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

function start(file: string, executor = 'inprocess'): Promise<Host> {
  return startHost({ transport: 'ws', args: ['--executor', executor, '--config', file] });
}

describe('SIGHUP reloads --config (contract §20)', () => {
  test('a profile narrowed by SIGHUP refuses the removed action on a session already open', async () => {
    const file = join(tempDir(), 'toolgate.json');
    writeFileSync(file, JSON.stringify({ agents: { default: { enabled_skills: SKILLS, allowed_actions: ['calendar.*', 'memory.*'] } } }));
    const h = await start(file);
    try {
      const { session_id, allowed_actions } = await openSession(h, await mintBearer('alice'));
      assert.ok(allowed_actions.includes('calendar.create'));
      const invoke = (id: string, args: unknown) => h.request<ToolResponse>('tool/invoke', { session_id, thread_id: 't', tool_call_id: id, args });
      assert.equal(code(await invoke('before', create('before'))), 'success');
      assert.equal(await metric(h, 'ok'), 0);

      writeFileSync(file, JSON.stringify({ agents: { default: { enabled_skills: ['calendar'], allowed_actions: ['calendar.read'] } } }));
      const line = await hangUp(h, 1);
      assert.match(line, /"msg":"config reloaded"/);
      assert.equal(code(await invoke('after', create('after'))), 'ACTION_NOT_ALLOWED', 'the removed action is refused on the open session');
      assert.equal(code(await invoke('read', read)), 'success', 'what stays allowed still runs');
      const skills = await h.request<{ skills: Array<{ name: string }> }>('skills/list', { session_id });
      assert.deepEqual(skills.skills.map((s) => s.name), ['calendar'], 'the session sees the profile’s new skills');
      // A new session gets the new lists too.
      const fresh = await openSession(await h.connect(), await mintBearer('bob'));
      assert.deepEqual(fresh.allowed_actions, ['calendar.read']);
      assert.equal(await metric(h, 'ok'), 1);
    } finally {
      await h.stop();
    }
  });

  test('a file that does not validate changes nothing and says why in one log line naming the key', async () => {
    const file = join(tempDir(), 'toolgate.json');
    writeFileSync(file, JSON.stringify({ agents: { default: { enabled_skills: SKILLS, allowed_actions: ['calendar.*'] } } }));
    const h = await start(file);
    try {
      const { session_id } = await openSession(h, await mintBearer('alice'));
      writeFileSync(file, JSON.stringify({ agents: { default: { enabled_skills: SKILLS, allowed_action: ['calendar.read'] } } }));
      const line = await hangUp(h, 1);
      assert.match(line, /"msg":"config reload rejected/);
      assert.match(line, /agents\.default\.allowed_action\b/, 'the line names the key');
      assert.equal(reloadLines(h).length, 1, 'one line');
      assert.equal(
        code(await h.request<ToolResponse>('tool/invoke', { session_id, thread_id: 't', tool_call_id: 'still', args: create('still allowed') })),
        'success',
        'the old profile still holds',
      );
      assert.deepEqual([await metric(h, 'rejected'), await metric(h, 'ok')], [1, 0]);
      // The daemon is still the one it was: a good file after a bad one applies.
      writeFileSync(file, JSON.stringify({ agents: { default: { enabled_skills: SKILLS, allowed_actions: ['memory.*'] } } }));
      assert.match(await hangUp(h, 2), /"msg":"config reloaded"/);
      assert.equal(
        code(await h.request<ToolResponse>('tool/invoke', { session_id, thread_id: 't', tool_call_id: 'gone', args: create('gone') })),
        'ACTION_NOT_ALLOWED',
      );
    } finally {
      await h.stop();
    }
  });

  test('quotas reload too: a call refused by a quota runs under the same id once a reload raises it', async () => {
    const file = join(tempDir(), 'toolgate.json');
    const withQuota = (perDay: number) =>
      writeFileSync(file, JSON.stringify({ agents: { default: { enabled_skills: SKILLS, allowed_actions: ['calendar.*'], quotas: { 'calendar.create': { per_day: perDay } } } } }));
    writeFileSync(file, JSON.stringify({ agents: { default: { enabled_skills: SKILLS, allowed_actions: ['calendar.*'] } } }));
    const h = await start(file, 'subprocess');
    try {
      const { session_id } = await openSession(h, await mintBearer('alice'));
      const invoke = (id: string, title: string) => h.request<ToolResponse>('tool/invoke', { session_id, thread_id: 'q', tool_call_id: id, args: create(title) });
      assert.equal(code(await invoke('free-1', 'no quota yet')), 'success');
      withQuota(1);
      await hangUp(h, 1);
      // A day window: this user's count starts now (calls before the quota existed were not counted).
      assert.equal(code(await invoke('q-1', 'first')), 'success');
      const refused = await invoke('q-2', 'second');
      assert.equal(code(refused), 'RATE_LIMITED');
      withQuota(5);
      await hangUp(h, 2);
      const again = await invoke('q-2', 'second');
      assert.equal(code(again), 'success', 'the refused id was left free: the same call runs now');
    } finally {
      await h.stop();
    }
  });
});

/** Whether process `pid` has `file` open (Linux: its /proc fd links). */
function hasOpen(pid: number, file: string): boolean {
  return readdirSync(`/proc/${pid}/fd`).some((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`) === file;
    } catch {
      return false;
    }
  });
}

test('a SIGHUP while the daemon is still starting does not end it: the file is read again once it serves', { skip: !existsSync('/proc/self/fd') && 'needs /proc' }, async () => {
  const dir = tempDir();
  const db = join(dir, 'toolgate.db');
  const file = join(dir, 'toolgate.json');
  writeFileSync(file, JSON.stringify({ agents: { default: { enabled_skills: SKILLS, allowed_actions: ['calendar.*'] } } }));
  // Start-up waits on the database while another process holds its write lock: the daemon is surely starting.
  // (In WAL mode, as the daemon keeps it: switching a fresh file to WAL would fail at once instead of waiting.)
  const wal = new Database(db);
  wal.pragma('journal_mode = WAL');
  wal.close();
  let release: (() => Promise<void>) | undefined = await holdWriteLock(db);
  const proc = spawn(process.execPath, [TOOLGATE_BIN, 'serve', '--ws', '--port', '0', '--db', db, '--config', file, '--executor', 'inprocess'], {
    env: { PATH: process.env.PATH ?? '', TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_HOME: dir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => proc.once('exit', (code, signal) => resolve([code, signal])));
  try {
    await waitFor(() => proc.exitCode === null && proc.signalCode === null && hasOpen(proc.pid!, db), () => `the daemon opening its database; log:\n${stderr}`);
    // An operator edits the file and reloads (systemctl reload right after start) before the daemon serves.
    writeFileSync(file, JSON.stringify({ agents: { default: { enabled_skills: ['calendar'], allowed_actions: ['calendar.read'] } } }));
    proc.kill('SIGHUP');
    await release();
    release = undefined;
    const listening = await waitFor(
      () => /"listening":\{"host":"[^"]+","port":(\d+)\}/.exec(stderr) ?? (proc.exitCode !== null || proc.signalCode !== null ? assert.fail(`the daemon ended (${proc.exitCode ?? proc.signalCode}); log:\n${stderr}`) : undefined),
      () => `listening; log:\n${stderr}`,
    );
    await waitFor(() => /"msg":"config reloaded"/.test(stderr), () => `the reload line; log:\n${stderr}`);
    const client = await connectWs(Number(listening[1]));
    try {
      const opened = await openSession(client, await mintBearer('alice'));
      assert.deepEqual(opened.allowed_actions, ['calendar.read'], 'the file as edited during the start applies');
    } finally {
      await client.close();
    }
    proc.kill('SIGTERM');
    assert.deepEqual(await exited, [0, null], stderr);
  } finally {
    await release?.();
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  }
});

/** A project-cli process under this one (its children, theirs…: the launcher may run the daemon as its child), read from Linux /proc. */
function projectCliUnder(pid: number): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  } catch {
    return undefined;
  }
  for (const child of text ? text.split(' ').map(Number) : []) {
    const cmdline = (() => {
      try {
        return readFileSync(`/proc/${child}/cmdline`, 'utf8');
      } catch {
        return '';
      }
    })();
    if (cmdline.includes('project-cli')) return child;
    const deeper = projectCliUnder(child);
    if (deeper !== undefined) return deeper;
  }
  return undefined;
}

test('shutdown waits for a stopped call by the cancel grace a SIGHUP set, not the one read at start', { skip: !existsSync(`/proc/${process.pid}/task/${process.pid}/children`) && 'needs /proc children', timeout: 60_000 }, async () => {
  const file = join(tempDir(), 'toolgate.json');
  const config = (cancelGraceMs: number) =>
    JSON.stringify({ agents: { default: { enabled_skills: SKILLS, allowed_actions: ['calendar.*'] } }, limits: { cancel_grace_ms: cancelGraceMs, shutdown_grace_ms: 100 } });
  writeFileSync(file, config(50));
  const h = await start(file, 'subprocess');
  let child: number | undefined;
  try {
    // Reloaded: a stopped child now gets 4 s between SIGTERM and SIGKILL. A daemon that went by the grace read at
    // start (50 ms) exits ~3.2 s after its SIGTERM (measured, src/app/serve.ts's bounds), before that SIGKILL, with
    // the call not stored: 4 s keeps the two apart (at 3 s they were not).
    writeFileSync(file, config(4_000));
    assert.match(await hangUp(h, 1), /"msg":"config reloaded"/);
    const s = await openSession(h, await mintBearer('grace'));
    const pending = h.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 'g', tool_call_id: 'held', args: create('held') });
    pending.catch(() => {});
    // The call's project-cli child, frozen as it starts: it dies only of SIGKILL (a SIGTERM waits while it is stopped).
    child = await waitFor(() => projectCliUnder(h.proc.pid!), 'the call\'s project-cli child', 15_000, 1);
    process.kill(child, 'SIGSTOP');
    h.proc.kill('SIGTERM');
    await h.exited;
    // Past the shutdown grace the call was stopped, and the daemon waited for its child's SIGKILL (the live
    // grace, 4 s) before closing the database: the call is stored, cancelled, not left without an outcome.
    const stored = await dbRows<{ content: string }>(h.dbPath, "SELECT content FROM messages WHERE tool_call_id = 'held'");
    assert.equal(stored.length, 1, `the stopped call's outcome was stored; log:\n${h.stderr().slice(-2000)}`);
    assert.match(stored[0]!.content, /"code":"CANCELLED"/);
  } finally {
    if (child !== undefined) {
      try {
        process.kill(child, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    if (h.proc.exitCode === null && h.proc.signalCode === null) h.proc.kill('SIGKILL');
  }
});
