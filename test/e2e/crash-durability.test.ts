/**
 * Durability under SIGKILL: a burst of concurrent calls, the daemon killed
 * in the middle of it, a restart on the same file. Every acknowledged call
 * is there exactly once (its effect and its tool message, byte for byte what
 * was acknowledged), no call is half-written (a batch's items all or none,
 * an effect never without its message after recovery), and every retry is
 * answered from the store without running again — for both executors over
 * both transports.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { startHost, openSession, TRANSPORTS, type Host } from '../helpers/host.js';
import { startInProcess } from '../helpers/in-process.js';
import { mintBearer } from '../helpers/tokens.js';
import { tempDir } from '../helpers/repo.js';
import type { ToolResponse } from '../../src/protocol/index.js';
import { waitFor } from '../helpers/wait-for.js';


const EXECUTORS = ['subprocess', 'inprocess'] as const;
/** Calls in the burst, and how many answers to wait for before the kill. */
const BURST = { subprocess: { calls: 32, killAfter: 6 }, inprocess: { calls: 200, killAfter: 25 } };
const THREAD = 'burst';

const titleOf = (id: string, item?: number) => (item === undefined ? `burst ${id}` : `burst ${id} item ${item}`);

/** Every fifth call is a batch of three: its items commit together with the call or not at all. */
function argsOf(i: number): { module: string; method: string; input: Record<string, unknown> } {
  const id = `c${i}`;
  const at = (h: number) => `2026-06-01T${String(h).padStart(2, '0')}:00:00Z`;
  if (i % 5 === 0) {
    return { module: 'calendar', method: 'create', input: { items: [0, 1, 2].map((k) => ({ title: titleOf(id, k), start_at: at(8), end_at: at(9) })) } };
  }
  return { module: 'calendar', method: 'create', input: { title: titleOf(id), start_at: at(10), end_at: at(11) } };
}
const expectedEvents = (i: number) => (i % 5 === 0 ? 3 : 1);

function eventsOf(db: Database.Database, i: number): number {
  const id = `c${i}`;
  const titles = i % 5 === 0 ? [0, 1, 2].map((k) => titleOf(id, k)) : [titleOf(id)];
  return (db.prepare(`SELECT count(*) AS n FROM events WHERE title IN (${titles.map(() => '?').join(',')})`).get(...titles) as { n: number }).n;
}

function messagesOf(db: Database.Database, i: number): Array<{ content: string }> {
  return db.prepare("SELECT content FROM messages WHERE user_id = 'alice' AND thread_id = ? AND tool_call_id = ?").all(THREAD, `c${i}`) as Array<{ content: string }>;
}

/** project-cli processes the killed daemon left behind finish on their own; wait for the ones on this database. */
async function orphansDone(dbPath: string): Promise<void> {
  const mine = () =>
    readdirSync('/proc').filter((pid) => {
      if (!/^\d+$/.test(pid)) return false;
      try {
        return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`TOOLGATE_DB=${dbPath}`);
      } catch {
        return false;
      }
    });
  await waitFor(() => mine().length === 0, () => `the project-cli children of ${dbPath} to exit (pids ${mine().join(', ')})`, 30_000);
}

for (const executor of EXECUTORS) {
  for (const transport of TRANSPORTS) {
    describe(`${executor} executor over ${transport}`, () => {
      test('SIGKILL in the middle of a burst: acknowledged calls exactly once, none half-written, retries answered from the store', async (t) => {
        const { calls, killAfter } = BURST[executor];
        const dataDir = tempDir();
        const token = await mintBearer('alice');
        const args = ['--executor', executor];

        const first: Host = await startHost({ transport, dataDir, args });
        const s = await openSession(first, token);
        const acked = new Map<number, string>();
        let killed = false;
        await new Promise<void>((resolve) => {
          for (let i = 0; i < calls; i++) {
            first
              .request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: THREAD, tool_call_id: `c${i}`, args: argsOf(i) })
              .then((r) => {
                if (killed) return;
                assert.equal(r.status, 'success', r.content[0]!.text);
                acked.set(i, r.content[0]!.text);
                if (acked.size === killAfter) {
                  killed = true;
                  first.proc.kill('SIGKILL');
                  resolve();
                }
              })
              .catch(() => {
                /* cut off by the kill: not acknowledged */
              });
          }
        });
        await first.exited;
        await orphansDone(first.dbPath);
        assert.ok(acked.size >= killAfter);

        // The restart runs in this process, on the same transport, database and executor: what is
        // checked is what its start recovered and how it answers retries, not its process.
        const second = await startInProcess({ transport, dataDir, db: first.dbPath, executor });
        try {
          // Answered only once the daemon serves, i.e. after its recovery at start.
          const s2 = await openSession(second, token);
          const db = new Database(second.dbPath, { readonly: true });
          const before: number[] = [];
          try {
            // The restarted daemon has recovered every committed effect into its tool message.
            for (let i = 0; i < calls; i++) {
              const events = eventsOf(db, i);
              const messages = messagesOf(db, i);
              before.push(events);
              assert.ok(events === 0 || events === expectedEvents(i), `call ${i}: ${events} events — half-written`);
              assert.equal(messages.length, events === 0 ? 0 : 1, `call ${i}: ${events} events but ${messages.length} tool messages`);
              if (acked.has(i)) {
                assert.equal(events, expectedEvents(i), `acknowledged call ${i} lost its effect`);
                assert.equal(messages[0]!.content, acked.get(i), `acknowledged call ${i} stored other bytes`);
              }
            }
          } finally {
            db.close();
          }
          t.diagnostic(`${calls} calls: ${acked.size} acknowledged, ${before.filter((n) => n > 0).length} committed before the kill`);

          const retries = await Promise.all(
            Array.from({ length: calls }, (_, i) =>
              second.request<ToolResponse>('tool/invoke', { session_id: s2.session_id, thread_id: THREAD, tool_call_id: `c${i}`, args: argsOf(i) }),
            ),
          );
          const after = new Database(second.dbPath, { readonly: true });
          try {
            for (let i = 0; i < calls; i++) {
              assert.equal(retries[i]!.status, 'success', retries[i]!.content[0]!.text);
              assert.equal(eventsOf(after, i), expectedEvents(i), `call ${i} ran ${eventsOf(after, i)} times`);
              assert.equal(messagesOf(after, i).length, 1);
              assert.equal(retries[i]!.content[0]!.text, messagesOf(after, i)[0]!.content);
              // A call that had committed is answered from the store: same bytes, nothing ran again.
              if (before[i]! > 0) assert.equal(retries[i]!.content[0]!.text, messagesOf(after, i)[0]!.content);
              if (acked.has(i)) assert.equal(retries[i]!.content[0]!.text, acked.get(i));
            }
          } finally {
            after.close();
          }
        } finally {
          await second.stop();
        }
      });
    });
  }
}
