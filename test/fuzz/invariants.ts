/**
 * What every fuzz case checks, whatever it sent: answers are structured
 * JSON-RPC (or structured tool results), never INTERNAL, and no secret
 * appears in any output, log line or database byte.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_BEARER_SECRET } from '../helpers/tokens.js';

export interface RpcAnswer {
  jsonrpc?: unknown;
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown; data?: unknown };
  method?: unknown;
}

/** A response: jsonrpc 2.0, an id, exactly one of result/error, a numeric code and a message; never -32603. */
export function assertStructured(m: RpcAnswer, context: string): void {
  assert.equal(m.jsonrpc, '2.0', `${context}: jsonrpc 2.0 (${JSON.stringify(m).slice(0, 300)})`);
  if (typeof m.method === 'string') return; // a notification from the daemon
  assert.ok('id' in m, `${context}: a response has an id`);
  assert.ok(('result' in m) !== ('error' in m), `${context}: exactly one of result and error`);
  if (m.error) {
    assert.ok(Number.isInteger(m.error.code), `${context}: integer error code`);
    assert.equal(typeof m.error.message, 'string', `${context}: error message`);
    assert.notEqual(m.error.code, -32603, `${context}: no internal error: ${JSON.stringify(m).slice(0, 500)}`);
  }
}

const TOOL_STATUSES = new Set(['success', 'failure', 'partial']);

/** A tool/invoke result: the ToolResponse shape, its text the JSON projection, never INTERNAL. */
export function assertToolResponse(r: unknown, context: string): { status: string; text: Record<string, any> } {
  const t = r as { tool_call_id?: unknown; status?: unknown; content?: Array<{ type?: unknown; text?: unknown }> };
  assert.equal(typeof t.tool_call_id, 'string', `${context}: tool_call_id`);
  assert.ok(TOOL_STATUSES.has(t.status as string), `${context}: status ${String(t.status)}`);
  assert.equal(t.content?.length, 1, `${context}: one content part`);
  assert.equal(t.content![0]!.type, 'text');
  const text = JSON.parse(t.content![0]!.text as string) as Record<string, any>;
  assert.equal(text.status, t.status, `${context}: the text projects the status`);
  if (t.status === 'failure') {
    assert.equal(typeof text.error?.code, 'string', `${context}: structured error`);
    assert.notEqual(text.error.code, 'INTERNAL', `${context}: no INTERNAL: ${JSON.stringify(text).slice(0, 500)}`);
  }
  return { status: t.status as string, text };
}

/**
 * What must never come out for `token`: its signature, and two pieces of it far apart (a split or padded
 * variant keeps at least one whole — a wrap or an inserted character cuts the signature in at most two places,
 * never inside both), and the bearer secret it is signed with.
 */
export function tokenMarks(token: string): string[] {
  const sig = token.split('.')[2]!;
  return [sig, sig.slice(12, 22), sig.slice(-10), TEST_BEARER_SECRET];
}

/** No mark (a token's signature, a secret) in `text`. */
export function assertNoSecret(text: string, marks: readonly string[], where: string): void {
  for (const m of marks) assert.ok(!text.includes(m), `a secret appears in ${where}`);
}

/** Every database file in `dir` — the main file, `-wal`, `-shm`, journals — holds no mark. */
export function assertNoSecretInDbFiles(dir: string, marks: readonly string[], dbName = 'toolgate.db'): string[] {
  const files = existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith(dbName)) : [];
  for (const f of files) {
    const bytes = readFileSync(join(dir, f));
    for (const m of marks) {
      assert.ok(bytes.indexOf(Buffer.from(m, 'utf8')) < 0, `a secret appears in ${f}`);
    }
  }
  return files;
}

/** stderr is JSON log lines (or the listening line) and carries no stack trace. */
export function assertCleanStderr(stderr: string, marks: readonly string[]): void {
  assertNoSecret(stderr, marks, 'stderr');
  for (const line of stderr.split('\n').filter((l) => l.trim() !== '')) {
    let entry: { level?: string; msg?: string };
    try {
      entry = JSON.parse(line) as { level?: string; msg?: string };
    } catch {
      assert.fail(`stderr line is not JSON: ${line.slice(0, 300)}`);
    }
    assert.ok(!/handler failed|crashed/.test(entry.msg ?? ''), `stderr reports a crash: ${line.slice(0, 500)}`);
  }
}
