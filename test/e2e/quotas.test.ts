/**
 * Contract §20, per-user quotas, from outside: a profile's (and an automation
 * job's) quota passes n calls per window and answers the next one
 * `RATE_LIMITED` with `retry_after_ms` — nothing run, counted or stored, its
 * id free for later; a replay never counts. On PostgreSQL: calls raced
 * through three daemons on one database past a limit of n — exactly n pass;
 * the same call raced through all three counts once; and an action no quota
 * names costs no extra round trip.
 */
import type { RateLimitedError, ToolProjection } from '../../src/protocol/tool.js';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSession, startHost, type Client, type Host } from '../helpers/host.js';
import { startInProcess } from '../helpers/in-process.js';
import { mintBearer } from '../helpers/tokens.js';
import { dbCount, dbRows } from '../helpers/db.js';
import { freshPgDatabase, needsPg } from '../helpers/pg.js';
import { startPgWireProxy } from '../helpers/pg-wire-proxy.js';
import { tempDir } from '../helpers/repo.js';
import { waitFor } from '../helpers/wait-for.js';
import { holdWriteLock } from '../helpers/write-lock.js';
import { addAutomationJob } from '../../src/sessions/automation-jobs.js';
import { NOTIFY_STATEMENT } from '../../src/store/pg/notifier.js';
import type { ToolResponse } from '../../src/protocol/index.js';

const SKILLS = ['calendar', 'contacts', 'memory'];
const ALL = ['calendar.*', 'contacts.read', 'memory.*'];
const DAY_MS = 86_400_000;

const create = (title: string) => ({ module: 'calendar', method: 'create', input: { title, start_at: '2026-10-01T09:00:00Z', end_at: '2026-10-01T10:00:00Z' } });
const read = { module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-10-01' } };

/** A config file whose `default` profile may run everything, with these quotas. */
function configFile(quotas: Record<string, unknown>, extraAgents: Record<string, unknown> = {}): string {
  const file = join(tempDir(), 'toolgate.json');
  writeFileSync(file, JSON.stringify({ agents: { default: { enabled_skills: SKILLS, allowed_actions: ALL, quotas }, ...extraAgents } }));
  return file;
}

/** A call's projection; a refusal's error as RATE_LIMITED declares it (the other codes share its first fields). */
type Body = ToolProjection & { error?: RateLimitedError };
const body = (r: ToolResponse) => JSON.parse(r.content[0]!.text) as Body;
const code = (r: ToolResponse) => body(r).error?.code ?? body(r).status;

async function session(c: Client, user: string, agent?: string): Promise<string> {
  return (await openSession(c, await mintBearer(user), agent ? { agent } : {})).session_id;
}

function invoke(c: Client, sessionId: string, toolCallId: string, args: unknown, threadId = 'q'): Promise<ToolResponse> {
  return c.request<ToolResponse>('tool/invoke', { session_id: sessionId, thread_id: threadId, tool_call_id: toolCallId, args });
}

/**
 * Runs `work` until it ran within one UTC day (the windows these tests use):
 * a run that straddled midnight met two windows, so it is run again.
 */
async function withinOneDay<T>(work: (attempt: number) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const day = Math.floor(Date.now() / DAY_MS);
    const value = await work(attempt);
    if (Math.floor(Date.now() / DAY_MS) === day || attempt > 0) return value;
  }
}

describe('quotas (contract §20)', () => {
  test('n calls pass per window; the next is RATE_LIMITED with retry_after_ms, nothing of it stored; replays and other actions do not count', async () => {
    const host = await startInProcess({ args: ['--config', configFile({ 'calendar.create': { per_day: 2 } })] });
    try {
      await withinOneDay(async (attempt) => {
        const thread = `q${attempt}`;
        const s = await session(host, `alice${attempt}`);
        const first = await invoke(host, s, 'c1', create('one'), thread);
        assert.equal(code(first), 'success', first.content[0]!.text);
        assert.equal(code(await invoke(host, s, 'c2', create('two'), thread)), 'success');
        const refused = await invoke(host, s, 'c3', create('three'), thread);
        const error = body(refused).error!;
        assert.equal(error.code, 'RATE_LIMITED', refused.content[0]!.text);
        assert.equal(refused.status, 'failure');
        assert.deepEqual(error.quota, { pattern: 'calendar.create', period: 'day', limit: 2 });
        assert.ok(Number.isInteger(error.retry_after_ms) && error.retry_after_ms! > 0 && error.retry_after_ms! <= DAY_MS, `retry_after_ms ${error.retry_after_ms}`);
        assert.match(error.message, /retry/i, 'the message tells the model what to do');
        // Nothing of it is stored: no tool message, no event, no call record.
        assert.equal(await dbCount(host.dbPath, "SELECT count(*) AS n FROM messages WHERE thread_id = ? AND tool_call_id = 'c3'", [thread]), 0);
        assert.equal(await dbCount(host.dbPath, "SELECT count(*) AS n FROM tool_calls WHERE thread_id = ? AND tool_call_id = 'c3'", [thread]), 0);
        assert.equal(await dbCount(host.dbPath, "SELECT count(*) AS n FROM events WHERE title = 'three'"), 0);
        // A replay answers from the store, however full the quota, and is not counted.
        assert.equal(JSON.stringify(await invoke(host, s, 'c1', create('one'), thread)), JSON.stringify(first), 'the replay is the stored answer');
        const used = await dbRows<{ used: number }>(host.dbPath, "SELECT used FROM quota_counts WHERE user_id = ? AND period = 'day'", [`alice${attempt}`]);
        assert.deepEqual(used.map((r) => Number(r.used)), [2], 'two calls counted: no replay, no refusal');
        // An action no quota names, and another user, are not limited by alice's count.
        assert.equal(code(await invoke(host, s, 'r1', read, thread)), 'success');
        const bob = await session(host, `bob${attempt}`);
        assert.equal(code(await invoke(host, bob, 'c1', create('bob'), thread)), 'success');
      });
    } finally {
      await host.stop();
    }
  });

  test('a call matching two quotas counts against both; the fuller one refuses and nothing is counted', async () => {
    const host = await startInProcess({ args: ['--config', configFile({ 'calendar.*': { per_day: 3 }, 'calendar.create': { per_day: 1, per_hour: 10 } })] });
    try {
      await withinOneDay(async (attempt) => {
        const s = await session(host, `carol${attempt}`);
        assert.equal(code(await invoke(host, s, 'c1', create('one'), `t${attempt}`)), 'success');
        const refused = body(await invoke(host, s, 'c2', create('two'), `t${attempt}`)).error!;
        assert.equal(refused.code, 'RATE_LIMITED');
        assert.deepEqual(refused.quota, { pattern: 'calendar.create', period: 'day', limit: 1 });
        // calendar.* counted the one call that passed, not the refused one: two reads still pass, the third is refused.
        assert.equal(code(await invoke(host, s, 'r1', read, `t${attempt}`)), 'success');
        assert.equal(code(await invoke(host, s, 'r2', read, `t${attempt}`)), 'success');
        const third = body(await invoke(host, s, 'r3', read, `t${attempt}`)).error!;
        assert.deepEqual([third.code, third.quota?.pattern], ['RATE_LIMITED', 'calendar.*']);
      });
    } finally {
      await host.stop();
    }
  });

  test('an invalid call (INVALID_ACTION_INPUT) or a refused one (ACTION_NOT_ALLOWED) counts nothing: validated before the quota', async () => {
    const narrow = { enabled_skills: SKILLS, allowed_actions: ['calendar.read'], quotas: { 'calendar.*': { per_day: 1 } } };
    const host = await startInProcess({ args: ['--config', configFile({ 'calendar.create': { per_day: 1 } }, { narrow })] });
    try {
      await withinOneDay(async (attempt) => {
        const thread = `v${attempt}`;
        const s = await session(host, `vera${attempt}`);
        // A create without its title, twice: each fails at once, and neither takes the day's one place.
        for (const id of ['bad1', 'bad2']) {
          const bad = await invoke(host, s, id, { module: 'calendar', method: 'create', input: { start_at: '2026-10-01T09:00:00Z' } }, thread);
          assert.equal(code(bad), 'INVALID_ACTION_INPUT', bad.content[0]!.text);
        }
        const good = await invoke(host, s, 'good', create('valid'), thread);
        assert.equal(code(good), 'success', good.content[0]!.text);
        assert.equal(code(await invoke(host, s, 'over', create('over'), thread)), 'RATE_LIMITED');

        // Through a profile whose whitelist lacks calendar.create (its quota names calendar.*): refused, uncounted.
        const n = await session(host, `vera${attempt}`, 'narrow');
        assert.equal(code(await invoke(host, n, 'na', create('not allowed'), `n${attempt}`)), 'ACTION_NOT_ALLOWED');
        assert.equal(code(await invoke(host, n, 'bad-read', { module: 'calendar', method: 'read', input: { mode: 'day' } }, `n${attempt}`)), 'INVALID_ACTION_INPUT');
        assert.equal(code(await invoke(host, n, 'r1', read, `n${attempt}`)), 'success');
        const used = await dbRows<{ scope: string; used: number }>(host.dbPath, "SELECT scope, used FROM quota_counts WHERE user_id = ? AND period = 'day' ORDER BY scope", [`vera${attempt}`]);
        assert.deepEqual(
          used.map((r) => [r.scope, Number(r.used)]),
          [
            ['agent:default:calendar.create', 1],
            ['agent:narrow:calendar.*', 1],
          ],
          'only the valid calls counted',
        );
      });
    } finally {
      await host.stop();
    }
  });

  test('re-invoking a call that awaits approval is not counted again: it waits, and both answer with the outcome', async () => {
    const file = join(tempDir(), 'toolgate.json');
    writeFileSync(
      file,
      JSON.stringify({ agents: { default: { enabled_skills: SKILLS, allowed_actions: ALL, quotas: { 'calendar.create': { per_day: 1 } }, approval: { ask: ['calendar.create'] } } } }),
    );
    const host = await startInProcess({ args: ['--config', file] });
    try {
      await withinOneDay(async (attempt) => {
        const thread = `qa${attempt}`;
        const s = await session(host, `erin${attempt}`);
        const first = invoke(host, s, 'ask1', create('asked'), thread);
        const asked = await waitFor(
          () => host.wire.find((e) => e.method === 'tool/approval' && (e.payload as { thread_id: string }).thread_id === thread)?.payload as { args_sha256: string } | undefined,
          'tool/approval',
        );
        // The same call again while it waits: counted once already, so no RATE_LIMITED — it waits too.
        const again = invoke(host, s, 'ask1', create('asked'), thread);
        await waitFor(() => host.wire.filter((e) => e.method === 'tool/approval' && (e.payload as { thread_id: string }).thread_id === thread).length >= 2 || undefined, 'the second tool/approval');
        // The same id with other arguments is another call: counted, so refused at the limit.
        assert.equal(code(await invoke(host, s, 'ask1', create('other'), thread)), 'RATE_LIMITED');
        await host.request('call/approve', { session_id: s, thread_id: thread, tool_call_id: 'ask1', args_sha256: asked.args_sha256 });
        assert.equal(code(await first), 'success');
        assert.equal(code(await again), 'success');
        assert.equal(code(await invoke(host, s, 'ask2', create('over'), thread)), 'RATE_LIMITED');
      });
    } finally {
      await host.stop();
    }
  });

  test('the same call sent again while it runs, at the limit, is not RATE_LIMITED: it answers with the call\'s outcome', async () => {
    // Debug: a retry that finds the call shared as running (PostgreSQL, past 100 ms) is admitted without a quota
    // line; its "tool call running" line says so.
    const host = await startInProcess({ transport: 'ws', args: ['--config', configFile({ 'calendar.create': { per_day: 1 } })], env: { TOOLGATE_LOG_LEVEL: 'debug' } });
    const other = await host.connect();
    const executor = host.services.executor;
    const execute = executor.execute.bind(executor);
    try {
      await withinOneDay(async (attempt) => {
        // The first try is held inside its executor (counted, not yet stored) until the retry has been admitted.
        let entered!: () => void;
        const inside = new Promise<void>((r) => (entered = r));
        let open!: () => void;
        const gate = new Promise<void>((r) => (open = r));
        executor.execute = async (...args: Parameters<typeof execute>) => {
          entered();
          await gate;
          return execute(...args);
        };
        const from = host.stderr().length;
        const thread = `twin${attempt}`;
        const title = `once ${attempt}`;
        const token = await mintBearer(`frank${attempt}`);
        const s1 = (await openSession(host, token)).session_id;
        const s2 = (await openSession(other, token)).session_id;
        const first = invoke(host, s1, 'c1', create(title), thread);
        await inside;
        // A host that lost its connection retries the same call (same id, same args) on another one.
        const retry = invoke(other, s2, 'c1', create(title), thread);
        const lines = () => host.stderr().slice(from).split('\n').filter((l) => l.includes('"tool_call_id":"c1"'));
        await waitFor(
          () => lines().some((l) => /"msg":"tool call (refused: quota reached|waits for its twin)"/.test(l)) || lines().filter((l) => l.includes('"msg":"tool call running"')).length >= 2,
          'the retry admitted',
        );
        open();
        const [a, b] = await Promise.all([first, retry]);
        assert.equal(code(a), 'success', a.content[0]!.text);
        assert.equal(code(b), 'success', `the retry is the same call, which ran: ${b.content[0]!.text}`);
        assert.equal(b.content[0]!.text, a.content[0]!.text);
        assert.equal(await dbCount(host.dbPath, 'SELECT count(*) AS n FROM events WHERE title = ?', [title]), 1, 'it ran once');
        const used = await dbRows<{ used: number }>(host.dbPath, "SELECT used FROM quota_counts WHERE user_id = ? AND period = 'day'", [`frank${attempt}`]);
        assert.deepEqual(used.map((r) => Number(r.used)), [1], 'counted once');
      });
    } finally {
      executor.execute = execute;
      await other.close();
      await host.stop();
    }
  });

  test('an automation job takes --quota', async () => {
    const host = await startInProcess();
    try {
      const { job_id } = await addAutomationJob({
        owner: 'dave', skills: ['calendar'], allow: ['calendar.*'], quota: JSON.stringify({ 'calendar.create': { per_day: 1 } }), db: host.dbPath, env: { TOOLGATE_HOME: host.dataDir },
      });
      await host.request('initialize', { protocol_version: '1' });
      const { session_id } = await host.request<{ session_id: string }>('session/open', { auth: { type: 'automation', job_id } });
      await withinOneDay(async (attempt) => {
        assert.equal(code(await invoke(host, session_id, `j1-${attempt}`, create('job one'))), 'success');
        assert.equal(code(await invoke(host, session_id, `j2-${attempt}`, create('job two'))), 'RATE_LIMITED');
      });
      await assert.rejects(
        addAutomationJob({ owner: 'dave', skills: [], allow: ['calendar.read'], quota: '{"calendar.nope":{"per_day":1}}', db: host.dbPath, env: { TOOLGATE_HOME: host.dataDir } }),
        /--quota: "calendar.nope" matches no action/,
      );
    } finally {
      await host.stop();
    }
  });
});

/** `toolgate_quota_rejections_total{action="…"}` on one daemon's /metrics. */
async function rejections(h: Host, action: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${h.port}/metrics`)).text();
  const m = new RegExp(`^toolgate_quota_rejections_total\\{action="${action.replace('.', '\\.')}"\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

describe('quotas across three daemons on one PostgreSQL database', needsPg, () => {
  test('N+k calls raced through three daemons past a limit of N: exactly N pass, k are RATE_LIMITED, N stored', async () => {
    const N = 5;
    const K = 7;
    const { url } = await freshPgDatabase();
    const config = configFile({ 'calendar.create': { per_day: N } });
    const hosts = await Promise.all([0, 1, 2].map(() => startHost({ transport: 'ws', db: url, args: ['--executor', 'inprocess', '--config', config] })));
    try {
      let runs = 0;
      await withinOneDay(async (attempt) => {
        runs++;
        const user = `racer${attempt}`;
        const sessions = await Promise.all(hosts.map((h) => session(h, user)));
        const answers = await Promise.all(
          Array.from({ length: N + K }, (_, i) => invoke(hosts[i % 3]!, sessions[i % 3]!, `race-${i}`, create(`${user} ${i}`), 'race')),
        );
        const codes = answers.map(code);
        assert.equal(codes.filter((c) => c === 'success').length, N, codes.join(' '));
        assert.equal(codes.filter((c) => c === 'RATE_LIMITED').length, K, codes.join(' '));
        assert.equal(await dbCount(url, 'SELECT count(*) AS n FROM events WHERE title LIKE ?', [`${user} %`]), N, 'N events');
        assert.equal(await dbCount(url, "SELECT count(*) AS n FROM messages WHERE user_id = ? AND role = 'tool'", [user]), N, 'only the calls that passed are stored');
        assert.deepEqual((await dbRows<{ used: number }>(url, 'SELECT used FROM quota_counts WHERE user_id = ?', [user])).map((r) => Number(r.used)), [N]);
      });
      const counted = await Promise.all(hosts.map((h) => rejections(h, 'calendar.create')));
      assert.equal(counted.reduce((a, b) => a + b, 0), K * runs, `toolgate_quota_rejections_total over the daemons: ${counted.join(' + ')}`);
    } finally {
      await Promise.all(hosts.map((h) => h.stop()));
    }
  });

  test('the same call raced through three daemons is counted once', async () => {
    const { url } = await freshPgDatabase();
    const config = configFile({ 'calendar.create': { per_day: 10 } });
    const hosts = await Promise.all([0, 1, 2].map(() => startHost({ transport: 'ws', db: url, args: ['--executor', 'inprocess', '--config', config] })));
    try {
      await withinOneDay(async (attempt) => {
        const user = `twin${attempt}`;
        const sessions = await Promise.all(hosts.map((h) => session(h, user)));
        for (let round = 0; round < 3; round++) {
          const answers = await Promise.all(hosts.map((h, i) => invoke(h, sessions[i]!, `twin-${round}`, create(`twin ${round}`), 'twins')));
          assert.ok(answers.every((a) => code(a) === 'success'), answers.map((a) => a.content[0]!.text).join('\n'));
        }
        const used = await dbRows<{ used: number }>(url, 'SELECT used FROM quota_counts WHERE user_id = ?', [user]);
        assert.deepEqual(used.map((r) => Number(r.used)), [3], 'one count per call, whichever daemon stored it');
      });
    } finally {
      await Promise.all(hosts.map((h) => h.stop()));
    }
  });

  test('the same call retried on another daemon while it runs, at the limit, is not RATE_LIMITED', async () => {
    // The first try runs on A, counted, held by the events table; the retry reaches B at once — within A's
    // first 100 ms, before A shares the call with the other daemons. It is the same call: never refused.
    const { url } = await freshPgDatabase();
    const config = configFile({ 'calendar.create': { per_day: 1 } });
    const [a, b] = await Promise.all([0, 1].map(() => startHost({ transport: 'ws', db: url, args: ['--executor', 'inprocess', '--config', config] })));
    try {
      await withinOneDay(async (attempt) => {
        const user = `grace${attempt}`;
        const [sa, sb] = await Promise.all([session(a!, user), session(b!, user)]);
        const title = `retried across ${attempt}`;
        const release = await holdWriteLock(url);
        let released = false;
        try {
          const first = invoke(a!, sa, 'c1', create(title), 'across');
          await waitFor(async () => (await dbCount(url, 'SELECT count(*) AS n FROM quota_counts WHERE user_id = ? AND used = 1', [user])) === 1, 'the first try counted');
          const retry = invoke(b!, sb, 'c1', create(title), 'across');
          // A shares the call once it has run 100 ms; the retry was sent before, and is decided by then.
          await waitFor(async () => (await dbCount(url, "SELECT count(*) AS n FROM calls WHERE user_id = ? AND state = 'running'", [user])) === 1, 'A to share the call');
          await release();
          released = true;
          const [ra, rb] = await Promise.all([first, retry]);
          assert.equal(code(ra), 'success', ra.content[0]!.text);
          assert.equal(rb.content[0]!.text, ra.content[0]!.text, "the retry answers the call's outcome");
          assert.equal(await dbCount(url, 'SELECT count(*) AS n FROM events WHERE title = ?', [title]), 1, 'it ran once');
        } finally {
          if (!released) await release();
        }
      });
    } finally {
      await Promise.all([a!.stop(), b!.stop()]);
    }
  });

  test('an action without a quota costs no extra round trip; one with a quota costs one', async (t) => {
    const db = await freshPgDatabase();
    const proxy = await startPgWireProxy(db.url, { ignore: (text) => text === NOTIFY_STATEMENT });
    const config = configFile({ 'memory.update': { per_day: 1000 } }, { free: { enabled_skills: SKILLS, allowed_actions: ALL } });
    const host = await startHost({ transport: 'ws', db: proxy.url, args: ['--executor', 'inprocess', '--config', config] });
    try {
      const limited = await session(host, 'erin');
      const free = await session(host, 'erin', 'free');
      const memory = (key: string) => ({ module: 'memory', method: 'update', input: { key, content: 'x' } });
      // Warm-up: every pooled connection has run each statement once.
      for (let i = 0; i < 12; i++) {
        assert.equal(code(await invoke(host, limited, `w-c${i}`, create(`warm ${i}`))), 'success');
        assert.equal(code(await invoke(host, limited, `w-m${i}`, memory(`w${i}`))), 'success');
        assert.equal(code(await invoke(host, free, `w-f${i}`, memory(`f${i}`))), 'success');
      }
      const trips = async (s: string, id: string, args: unknown) => {
        proxy.reset();
        assert.equal(code(await invoke(host, s, id, args)), 'success');
        const n = proxy.roundTrips();
        t.diagnostic(`${id}: ${n} round trips`);
        return n;
      };
      assert.equal(await trips(limited, 'rt-create', create('counted')), 1, 'calendar.create (no quota) is still one statement');
      const withQuota = await trips(limited, 'rt-mem', memory('k1'));
      const without = await trips(free, 'rt-mem-free', memory('k2'));
      assert.equal(withQuota, without + 1, 'the quota is one round trip before the call');
    } finally {
      await host.stop();
      await proxy.stop();
    }
  });
});
