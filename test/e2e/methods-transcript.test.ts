/**
 * A real session over stdio, recorded message by message: every message validates against
 * schemas/, and the transcript printed in docs/protocols/methods.md is checked the same way (its
 * requests against their params schema, its responses against their method's result schema), so
 * the documented examples cannot drift from the protocol. `TOOLGATE_WRITE_TRANSCRIPT=FILE` writes
 * the transcript of this run as Markdown (how the one in the doc was captured).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConformanceClient } from '../../src/conformance/client.js';
import { stdioTransport } from '../../src/conformance/transport.js';
import { WireValidator } from '../../src/conformance/wire-validator.js';
import * as P from '../../src/protocol/methods.js';
import { REPO_ROOT, TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { TEST_BEARER_SECRET, mintBearer } from '../helpers/tokens.js';

const validator = new WireValidator(join(REPO_ROOT, 'schemas'));
const DOC = join(REPO_ROOT, 'docs', 'protocols', 'methods.md');
type Msg = Record<string, unknown>;

async function recordSession(): Promise<Array<['->' | '<-', Msg]>> {
  const db = join(tempDir(), 'toolgate.db');
  const transport = stdioTransport([process.execPath, TOOLGATE_BIN, 'serve', '--stdio', '--db', db], {
    PATH: process.env.PATH ?? '',
    TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET,
  });
  const c = new ConformanceClient(transport, validator, 30_000, 'transcript');
  const token = await mintBearer('alice', { name: 'Alice' });
  const must = <R>(o: { ok: true; result: R } | { ok: false; error: unknown }): R => {
    if (!o.ok) throw new Error(`unexpected error ${JSON.stringify(o.error)}`);
    return o.result;
  };
  await c.request('thread/list', { session_id: 'early' });
  must(await c.call(P.InitializeRequest, { protocol_version: '1', client_info: { name: 'example-host', version: '1.0.0' } }));
  const s = must(await c.call(P.SessionOpenRequest, { auth: { type: 'bearer', token } })).session_id;
  const thread = 'trip-planning';
  must(await c.call(P.SkillsListRequest, { session_id: s }));
  must(await c.call(P.MessageAppendRequest, { session_id: s, thread_id: thread, role: 'user', content: 'Remember that I prefer window seats.' }));
  must(
    await c.call(P.ToolInvokeRequest, {
      session_id: s,
      thread_id: thread,
      tool_call_id: 'call-1',
      args: { module: 'memory', method: 'update', input: { key: 'seat', content: 'prefers window seats' } },
    }),
  );
  must(
    await c.call(P.ToolInvokeRequest, {
      session_id: s,
      thread_id: thread,
      tool_call_id: 'call-2',
      args: {
        module: 'calendar',
        method: 'create',
        input: {
          items: [
            { title: 'Flight to Lisbon', start_at: '2031-05-04T09:00:00+01:00', end_at: '2031-05-04T11:30:00+01:00' },
            { title: 'Hotel check-in', start_at: '2031-05-04T15:00:00+01:00', end_at: '2031-05-04T14:00:00+01:00' },
          ],
        },
      },
    }),
  );
  must(await c.call(P.ToolInvokeRequest, { session_id: s, thread_id: thread, tool_call_id: 'call-3', args: { module: 'weather', method: 'read', input: {} } }));
  must(
    await c.call(P.MessageAppendRequest, {
      session_id: s,
      thread_id: thread,
      role: 'assistant',
      content: 'Saved your seat preference and booked the flight; the hotel check-in ends before it starts.',
      worker_output: { status: 'partial', answer: 'Flight booked; hotel check-in needs a valid time.' },
    }),
  );
  must(await c.call(P.HistoryGetRequest, { session_id: s, thread_id: thread, view: 'context', limit: 3 }));
  must(await c.call(P.HistoryGetRequest, { session_id: s, thread_id: thread, view: 'ui', limit: 1 }));
  must(await c.call(P.ThreadListRequest, { session_id: s }));
  must(await c.call(P.ThreadSubscribeRequest, { session_id: s, thread_id: thread }));
  must(await c.call(P.ThreadUnsubscribeRequest, { session_id: s, thread_id: thread }));
  await c.call(P.HistoryGetRequest, { session_id: s, thread_id: 'no-such-thread' });
  must(await c.call(P.ShutdownRequest));
  await c.notify('exit');
  await c.waitFor(() => c.closedReason() !== undefined, 10_000);
  await transport.close();
  assert.deepEqual(c.violations, []);
  const shown = JSON.stringify(c.transcript());
  assert.ok(!JSON.stringify(c.received).includes(token.split('.')[2]!), 'the token signature appears in a reply');
  // The token the host sent is not the reader's business: it is shown as a placeholder.
  return JSON.parse(shown.replaceAll(token, '<bearer token>')) as Array<['->' | '<-', Msg]>;
}

function toMarkdown(transcript: Array<['->' | '<-', Msg]>): string {
  const out: string[] = [];
  for (const [dir, m] of transcript) {
    const label = dir === '->' ? `host → daemon${m.id === undefined ? ' (notification)' : ''}` : m.method ? 'daemon → host (notification)' : 'daemon → host';
    out.push(`${label}:`, '', '```json', JSON.stringify(m, null, 2), '```', '');
  }
  return out.join('\n');
}

/** The JSON blocks of the transcript section, with the direction each is labelled with. */
function documented(): Array<['->' | '<-', Msg]> {
  const text = readFileSync(DOC, 'utf8');
  const section = text.slice(text.indexOf('<!-- transcript:start -->'), text.indexOf('<!-- transcript:end -->'));
  assert.ok(section.length > 100, 'docs/protocols/methods.md has a transcript section');
  const blocks = [...section.matchAll(/^(host → daemon|daemon → host)[^\n]*:\n\n```json\n([\s\S]*?)\n```/gm)];
  return blocks.map((b) => [b[1] === 'host → daemon' ? '->' : '<-', JSON.parse(b[2]!) as Msg]);
}

function checkTranscript(transcript: Array<['->' | '<-', Msg]>): string[] {
  const problems: string[] = [];
  const methodOf = new Map<unknown, string>();
  const check = (shape: string | null, value: unknown, what: string) => {
    if (!shape) return;
    for (const e of validator.check(shape, value)) problems.push(`${what}: ${e}`);
  };
  for (const [dir, m] of transcript) {
    const method = typeof m.method === 'string' ? m.method : undefined;
    if (dir === '->' && method) {
      const spec = (P.REQUESTS as Record<string, { paramsId: string | null }>)[method];
      if (m.id !== undefined) methodOf.set(m.id, method);
      // Requests the protocol does not define are shown to document their error; their params are free.
      if (spec && m.id !== undefined && 'params' in m && method !== 'thread/list') check(spec.paramsId, m.params, `${method} params`);
    } else if (dir === '<-' && method === 'tool/result') check('ToolResultNotification', m.params, 'tool/result');
    else if (dir === '<-' && 'result' in m) {
      const spec = (P.REQUESTS as Record<string, { resultId: string }>)[methodOf.get(m.id) ?? ''];
      if (!spec) problems.push(`a result for no documented request (id ${JSON.stringify(m.id)})`);
      else check(spec.resultId, m.result, `${methodOf.get(m.id)} result`);
    } else if (dir === '<-' && 'error' in m) check('RpcError', m.error, 'error');
  }
  return problems;
}

test('a recorded session validates against schemas/, and so does the transcript in docs/protocols/methods.md', async () => {
  const transcript = await recordSession();
  assert.deepEqual(checkTranscript(transcript), []);
  if (process.env.TOOLGATE_WRITE_TRANSCRIPT) writeFileSync(process.env.TOOLGATE_WRITE_TRANSCRIPT, toMarkdown(transcript));
  const doc = documented();
  assert.ok(doc.some(([, m]) => m.method === 'tool/result'), 'the documented transcript shows tool/result');
  assert.deepEqual(checkTranscript(doc), []);
});
