/**
 * Entry (f): `history/get` of 200 messages (ui and context views) from a
 * 100k-message database, against the raw SELECT of the same rows returned by
 * the echo anchor over the same stdio transport (vscode-jsonrpc stringifies
 * them), and, for reference, the SELECT + JSON.stringify in this process.
 *
 * The database is made the way a user makes one — tool calls and appended
 * messages through toolgate's protocol — and then multiplied by copying those
 * rows inside SQLite (fresh ids; the tool-call id in the column and in the
 * stored tool_agent_output kept equal), since 100k real calls would not fit
 * the five minutes.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { median, medianRatio } from './stats.js';
import { tempDir } from './env.js';
import { startToolgateStdio, type Synchronous } from './targets/toolgate.js';
import { startEcho } from './targets/echo.js';

export interface HistoryResult {
  messages: number;
  pageSize: number;
  rounds: number;
  ui: number;
  context: number;
  raw: number;
  rawInProcess: number;
  uiRatio: number;
  contextRatio: number;
  bytes: { ui: number; context: number; raw: number };
}

const THREAD = 'history-bench';

const SEED_CALLS: Array<(i: number) => { module: string; method: string; input: Record<string, unknown> }> = [
  (i) => ({ module: 'calendar', method: 'create', input: { title: `Seed ${i}`, start_at: '2026-04-21T10:00:00+08:00', end_at: '2026-04-21T11:00:00+08:00', location: 'Room 1' } }),
  () => ({ module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-04-21', timezone: 'Asia/Shanghai' } }),
  (i) => ({ module: 'memory', method: 'update', input: { key: `k${i % 7}`, content: `remember ${i}` } }),
  () => ({ module: 'contacts', method: 'read', input: {} }),
];

async function seed(dbFile: string, dataDir: string, synchronous: Synchronous, total: number): Promise<void> {
  const tg = await startToolgateStdio({ executor: 'inprocess', dbFile, dataDir, synchronous });
  try {
    // 160 tool calls and 80 user/assistant messages: the template.
    for (let i = 0; i < 80; i++) {
      await tg.request('message/append', { session_id: tg.sessionId, thread_id: THREAD, role: i % 2 ? 'assistant' : 'user', content: `message ${i}: what is on my calendar?` });
      for (let j = 0; j < 2; j++) {
        const n = i * 2 + j;
        await tg.request('tool/invoke', { session_id: tg.sessionId, thread_id: THREAD, tool_call_id: `seed-${n}`, args: SEED_CALLS[n % SEED_CALLS.length]!(n) });
      }
    }
  } finally {
    await tg.stop();
  }
  const db = new Database(dbFile);
  try {
    const cols = (db.prepare('PRAGMA table_info(messages)').all() as Array<{ name: string }>).map((c) => c.name);
    const { where, key } = threadFilter(db, cols);
    const template = db.prepare(`SELECT count(*) AS n, max(seq) AS top FROM messages WHERE ${where}`).get(...key) as { n: number; top: number };
    // Every column but the row id; fresh message and tool-call ids, and (when
    // the schema numbers messages per thread) sequence numbers after the last.
    const expr = (c: string) => {
      switch (c) {
        case 'id': return `id || '-' || @k`;
        case 'tool_call_id': return `CASE WHEN tool_call_id IS NULL THEN NULL ELSE tool_call_id || '-' || @k END`;
        case 'metadata': return `CASE WHEN tool_call_id IS NULL THEN metadata ELSE json_set(metadata, '$.tool_agent_output.tool_call_id', tool_call_id || '-' || @k) END`;
        case 'thread_seq': return `thread_seq + @k * @n`;
        default: return c;
      }
    };
    const copied = cols.filter((c) => c !== 'seq');
    let p = 0;
    const named = where.replace(/\?/g, () => `@t${p++}`);
    const copy = db.prepare(`INSERT INTO messages (${copied.join(', ')}) SELECT ${copied.map(expr).join(', ')} FROM messages WHERE ${named} AND seq <= @top ORDER BY seq`);
    db.pragma('synchronous = OFF'); // building the fixture only
    db.transaction(() => {
      for (let k = 1; template.n * (k + 1) <= total; k++) {
        copy.run({ k, n: template.n, top: template.top, ...Object.fromEntries(key.map((v, j) => [`t${j}`, v])) });
      }
      const threadCols = (db.prepare('PRAGMA table_info(threads)').all() as Array<{ name: string }>).map((c) => c.name);
      if (threadCols.includes('last_seq') && cols.includes('thread_seq') && key.length === 2) {
        db.prepare('UPDATE threads SET last_seq = (SELECT max(thread_seq) FROM messages WHERE user_id = ? AND thread_id = ?) WHERE user_id = ? AND id = ?').run(key[0], key[1], key[0], key[1]);
      }
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/**
 * How the bench's thread is found in the messages table: by (user_id, thread_id)
 * where threads are a per-user namespace, else by its internal id alone.
 */
function threadFilter(db: Database.Database, cols: string[]): { where: string; key: string[]; order: string } {
  const order = cols.includes('thread_seq') ? 'thread_seq' : 'seq';
  if (cols.includes('user_id')) {
    const row = db.prepare('SELECT user_id, thread_id FROM messages GROUP BY user_id, thread_id ORDER BY count(*) DESC LIMIT 1').get() as { user_id: string; thread_id: string };
    return { where: 'user_id = ? AND thread_id = ?', key: [row.user_id, row.thread_id], order };
  }
  const row = db.prepare('SELECT thread_id FROM messages GROUP BY thread_id ORDER BY count(*) DESC LIMIT 1').get() as { thread_id: string };
  return { where: 'thread_id = ?', key: [row.thread_id], order };
}

export async function runHistory(opts: { synchronous: Synchronous; total: number; pageSize: number; rounds: number; perRound: number; log: (l: string) => void }): Promise<HistoryResult> {
  const dir = tempDir();
  const dbFile = join(dir, 'history.db');
  const t0 = performance.now();
  await seed(dbFile, dir, opts.synchronous, opts.total);
  const db = new Database(dbFile, { readonly: true });
  const cols = (db.prepare('PRAGMA table_info(messages)').all() as Array<{ name: string }>).map((c) => c.name);
  const filter = threadFilter(db, cols);
  const rawSql = `SELECT * FROM messages WHERE ${filter.where} ORDER BY ${filter.order} DESC LIMIT ?`;
  const messages = (db.prepare('SELECT count(*) AS n FROM messages').get() as { n: number }).n;
  opts.log(`  history fixture: ${messages} messages in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const select = db.prepare(rawSql);

  const tg = await startToolgateStdio({ executor: 'inprocess', dbFile, dataDir: dir, synchronous: opts.synchronous });
  const echo = await startEcho();
  const bytes = { ui: 0, context: 0, raw: 0 };
  const per = { ui: [] as number[], context: [] as number[], raw: [] as number[], rawInProcess: [] as number[] };
  try {
    const get = (view: 'ui' | 'context') => tg.request<{ messages: unknown[] }>('history/get', { session_id: tg.sessionId, thread_id: THREAD, view, limit: opts.pageSize });
    const raw = () => echo.peer.rpc.sendRequest('history/raw', { db: dbFile, sql: rawSql, args: [...filter.key, opts.pageSize] }) as Promise<{ messages: unknown[] }>;
    const timeOf = async (fn: () => Promise<unknown>, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) {
        const t = performance.now();
        await fn();
        out.push(performance.now() - t);
      }
      return median(out);
    };
    const page = await get('ui');
    if (page.messages.length !== opts.pageSize) throw new Error(`history/get returned ${page.messages.length} messages`);
    bytes.ui = JSON.stringify(page).length;
    bytes.context = JSON.stringify(await get('context')).length;
    bytes.raw = JSON.stringify(await raw()).length;
    for (let i = 0; i < 5; i++) await Promise.all([get('ui'), get('context'), raw()]); // warm-up
    for (let r = 0; r < opts.rounds; r++) {
      per.ui.push(await timeOf(() => get('ui'), opts.perRound));
      per.context.push(await timeOf(() => get('context'), opts.perRound));
      per.raw.push(await timeOf(raw, opts.perRound));
      per.rawInProcess.push(await timeOf(async () => JSON.stringify(select.all(...filter.key, opts.pageSize)), opts.perRound));
    }
  } finally {
    await tg.stop();
    await echo.stop();
    db.close();
  }
  return {
    messages,
    pageSize: opts.pageSize,
    rounds: opts.rounds,
    ui: median(per.ui),
    context: median(per.context),
    raw: median(per.raw),
    rawInProcess: median(per.rawInProcess),
    uiRatio: medianRatio(per.ui, per.raw),
    contextRatio: medianRatio(per.context, per.raw),
    bytes,
  };
}
