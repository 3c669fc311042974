/**
 * The floor under entries (b) and (c): their SQLite writes alone, in this
 * process — no transport, no validation, no projection, nothing but the
 * statements and the commit, at the same `synchronous` setting.
 *
 * - toolgate: the rows one real in-process `calendar.create` stored (captured
 *   from a daemon started for it, so the floor follows whatever the build
 *   writes): the credential audit row, the event, the call record, the
 *   thread's bump and the tool message — each call its own transaction
 *   (sequential), then eight calls per transaction (what group commit does at
 *   concurrency 8);
 * - the equal-work MCP anchor: its statements for the same writes
 *   (bench/anchors/equal-work-store.ts), one call per transaction;
 * - the thin MCP anchor: its one event insert per transaction.
 *
 * Interleaved rounds, medians. No call of either entry can be faster than its
 * floor plus the transport: that bounds what entry (c) could reach.
 */
import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { median } from './stats.js';
import { tempDir } from './env.js';
import { calendarInput, EVENTS_DDL } from './anchors/calendar-input.js';
import { openEqualWorkStore } from './anchors/equal-work-store.js';
import { startToolgateStdio, type Synchronous } from './targets/toolgate.js';
import { openDatabase } from '../src/store/database.js';

export interface FloorResult {
  synchronous: Synchronous;
  rounds: number;
  /** Median per-transaction latency, ms. */
  toolgateP50: number;
  mcpP50: number;
  /** The equal-work anchor's writes (absent in a result written before it existed). */
  equalP50?: number;
  equalFramesPerCall?: number;
  /** Calls per second, eight calls per transaction. */
  toolgateGroupRate: number;
  groupSize: number;
  /** Pages (WAL frames) one toolgate call's transaction writes, alone. */
  framesPerCall: number;
  /** Each round's figures; `interleaved`: round r ran right after round r of the side-by-side table. */
  perRound?: FloorRound[];
  interleaved?: boolean;
}

export interface FloorRound {
  toolgateP50: number;
  equalP50: number;
  mcpP50: number;
  groupRate: number;
}

type Row = Record<string, unknown>;

/** The tables a call writes, with the columns that must differ from call to call. */
const PER_CALL_KEYS: Record<string, string[]> = {
  credential_audit: ['jti'],
  events: ['id'],
  tool_calls: ['tool_call_id'],
  messages: ['id', 'tool_call_id'],
};

/** The rows one in-process `calendar.create` stored, read back from the daemon's file. */
async function captureCall(dir: string, synchronous: Synchronous): Promise<Record<string, Row>> {
  const dbFile = join(dir, 'capture.db');
  const tg = await startToolgateStdio({ executor: 'inprocess', dbFile, dataDir: dir, synchronous, thread: 'floor' });
  try {
    for (let i = 0; i < 3; i++) await tg.call(i);
  } finally {
    await tg.stop();
  }
  const db = new Database(dbFile, { readonly: true });
  try {
    const rows: Record<string, Row> = {};
    for (const table of Object.keys(PER_CALL_KEYS)) {
      const row = db.prepare(`SELECT * FROM ${table} ORDER BY rowid DESC LIMIT 1`).get() as Row | undefined;
      if (!row) throw new Error(`floor: the captured call stored no ${table} row`);
      rows[table] = row;
    }
    delete rows.messages!.seq; // assigned by the table
    return rows;
  } finally {
    db.close();
  }
}

const insertOf = (db: Database.Database, table: string, row: Row) =>
  db.prepare(`INSERT INTO ${table} (${Object.keys(row).join(', ')}) VALUES (${Object.keys(row).map(() => '?').join(', ')})`);

/** toolgate's writes of call `n` on a file migrated like the daemon's. */
function toolgateWriter(file: string, synchronous: Synchronous, rows: Record<string, Row>) {
  const db = openDatabase(file, { synchronous });
  // The daemon checkpoints on its own thread (checkpointer.ts), never inside a commit: here, between rounds.
  db.pragma('wal_autocheckpoint = 0');
  const msg = rows.messages!;
  const now = new Date().toISOString();
  db.prepare('INSERT INTO users (id, created_at, updated_at) VALUES (?, ?, ?)').run(msg.user_id, now, now);
  db.prepare('INSERT INTO threads (user_id, id, created_at, updated_at) VALUES (?, ?, ?, ?)').run(msg.user_id, msg.thread_id, now, now);
  const inserts = Object.entries(rows).map(([table, row]) => ({ table, row, stmt: insertOf(db, table, row) }));
  const bump = db.prepare('UPDATE threads SET last_seq = last_seq + 1, updated_at = ? WHERE user_id = ? AND id = ? RETURNING last_seq');
  let n = 0;
  const call = () => {
    n++;
    for (const { table, row, stmt } of inserts) {
      const values: Row = { ...row };
      for (const k of PER_CALL_KEYS[table]!) values[k] = `${String(row[k])}-${n}`;
      if (table === 'messages') values.thread_seq = (bump.get(now, msg.user_id, msg.thread_id) as { last_seq: number }).last_seq;
      stmt.run(...Object.values(values));
    }
  };
  return { db, call };
}

/** The MCP anchor's insert (bench/anchors/mcp-server.ts), on a file set up as it sets its own up. */
function mcpWriter(file: string, synchronous: Synchronous) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.exec(EVENTS_DDL);
  const input = calendarInput(0);
  const now = new Date().toISOString();
  const event: Row = {
    id: '', owner_id: 'bench', title: input.title, start_at: input.start_at, end_at: input.end_at,
    start_ms: Date.parse(input.start_at), end_ms: Date.parse(input.end_at), location: null, description: null, created_at: now, updated_at: now,
  };
  const stmt = insertOf(db, 'events', event);
  let n = 0;
  return { db, call: () => stmt.run(...Object.values({ ...event, id: `evt_${++n}` })) };
}

/** The equal-work MCP anchor's statements for call `n`, on a file it set up itself. */
function equalWriter(file: string, synchronous: Synchronous) {
  const store = openEqualWorkStore(file, synchronous);
  let n = 0;
  return {
    db: store.db,
    call: () => {
      const input = calendarInput(++n);
      store.write('floor', `c${n}`, { module: 'calendar', method: 'create', input }, input);
    },
  };
}

/**
 * `count` transactions of `perTx` calls each: per-transaction latencies and
 * calls/s. As in the daemon's group commit, every call after a
 * transaction's first runs in its own SAVEPOINT.
 */
function transactions(db: Database.Database, call: () => void, count: number, perTx: number): { latencies: number[]; rate: number } {
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const savepoint = db.prepare('SAVEPOINT unit');
  const release = db.prepare('RELEASE unit');
  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    begin.run();
    call();
    for (let c = 1; c < perTx; c++) {
      savepoint.run();
      call();
      release.run();
    }
    commit.run();
    latencies.push(performance.now() - t);
  }
  return { latencies, rate: (count * perTx * 1000) / (performance.now() - started) };
}

/** WAL frames one transaction of one call appends (the WAL's growth, frame = 24-byte header + page). */
function framesOfOneCall(db: Database.Database, file: string, call: () => void): number {
  db.pragma('wal_checkpoint(TRUNCATE)');
  transactions(db, call, 1, 1);
  const { size } = statSync(`${file}-wal`);
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  return Math.round((size - 32) / (24 + pageSize));
}

export interface FloorOptions {
  synchronous: Synchronous;
  perRound: number;
  groupSize: number;
  log: (line: string) => void;
}

/** The floor's writers, set up and warmed; `round()` measures one round, `result()` sums up the rounds so far. */
export interface Floor {
  readonly synchronous: Synchronous;
  round(): FloorRound;
  result(interleaved: boolean): FloorResult;
  close(): void;
}

export async function openFloor(opts: FloorOptions): Promise<Floor> {
  const dir = tempDir('toolgate-bench-floor-');
  const rows = await captureCall(dir, opts.synchronous);
  const tgFile = join(dir, 'floor-toolgate.db');
  const tg = toolgateWriter(tgFile, opts.synchronous, rows);
  const mcp = mcpWriter(join(dir, 'floor-mcp.db'), opts.synchronous);
  const eqFile = join(dir, 'floor-mcp-equal.db');
  const eq = equalWriter(eqFile, opts.synchronous);
  const close = () => {
    tg.db.close();
    eq.db.close();
    mcp.db.close();
  };
  try {
    // Warm-up: statements, first pages.
    transactions(tg.db, tg.call, 50, 1);
    transactions(eq.db, eq.call, 50, 1);
    transactions(mcp.db, mcp.call, 50, 1);
    const framesPerCall = framesOfOneCall(tg.db, tgFile, tg.call);
    const equalFramesPerCall = framesOfOneCall(eq.db, eqFile, eq.call);
    const rounds: FloorRound[] = [];
    return {
      synchronous: opts.synchronous,
      round() {
        tg.db.pragma('wal_checkpoint(PASSIVE)');
        const r: FloorRound = {
          toolgateP50: median(transactions(tg.db, tg.call, opts.perRound, 1).latencies),
          equalP50: median(transactions(eq.db, eq.call, opts.perRound, 1).latencies),
          mcpP50: median(transactions(mcp.db, mcp.call, opts.perRound, 1).latencies),
          groupRate: transactions(tg.db, tg.call, Math.max(1, Math.round(opts.perRound / opts.groupSize)), opts.groupSize).rate,
        };
        rounds.push(r);
        opts.log(`  floor round ${rounds.length}: toolgate writes ${r.toolgateP50.toFixed(3)} ms, equal-work anchor's ${r.equalP50.toFixed(3)} ms, MCP insert ${r.mcpP50.toFixed(3)} ms`);
        return r;
      },
      result(interleaved) {
        const med = (k: keyof FloorRound) => median(rounds.map((r) => r[k]));
        return {
          synchronous: opts.synchronous,
          rounds: rounds.length,
          toolgateP50: med('toolgateP50'),
          mcpP50: med('mcpP50'),
          equalP50: med('equalP50'),
          equalFramesPerCall,
          toolgateGroupRate: med('groupRate'),
          groupSize: opts.groupSize,
          framesPerCall,
          perRound: [...rounds],
          interleaved,
        };
      },
      close,
    };
  } catch (err) {
    close();
    throw err;
  }
}
