/**
 * The transcripts printed in docs/protocols/: real sessions, recorded message by message through
 * the typed client's tap (`toolgate/client`), over stdio and WebSocket. Ids, timestamps and
 * tokens are normalised (first seen, first numbered), so a run reproduces the documented text
 * exactly. The test fails when
 *   - a live message does not validate against schemas/ (params, results, notifications, errors),
 *   - a documented message does not validate (the doc's examples are checked the same way), or
 *   - the documented transcript is not, byte for byte, what this run produced.
 * `npm run docs:transcripts` (TOOLGATE_WRITE_TRANSCRIPTS=1) rewrites the blocks between
 * `<!-- transcript:NAME -->` and `<!-- /transcript:NAME -->` in the pages from this run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { ResponseError, ToolgateClient, type Message, type MessageTap } from '../../src/client/index.js';
import { WireValidator } from '../../src/conformance/wire-validator.js';
import * as P from '../../src/protocol/methods.js';
import { startInProcess } from '../helpers/in-process.js';
import { REPO_ROOT, TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { TEST_BEARER_SECRET, mintBearer } from '../helpers/tokens.js';

const validator = new WireValidator(join(REPO_ROOT, 'schemas'));
const DOCS = join(REPO_ROOT, 'docs', 'protocols');
const WRITE = process.env.TOOLGATE_WRITE_TRANSCRIPTS === '1';

type Msg = Record<string, unknown>;
interface Entry {
  /** '' for a single connection; 'A', 'B' … when a transcript shows several. */
  peer: string;
  dir: '->' | '<-';
  message: Msg;
}

class Recorder {
  readonly entries: Entry[] = [];
  /** Secrets and their placeholders: the reader sees where a token went, never a token. */
  readonly placeholders = new Map<string, string>();
  /** Off while a session does what every page shows already (its `initialize`). */
  recording = true;
  tap(peer = ''): MessageTap {
    return (direction, message: Message) => {
      if (this.recording) this.entries.push({ peer, dir: direction === 'send' ? '->' : '<-', message: JSON.parse(JSON.stringify(message)) as Msg });
    };
  }
  /** `initialize`, unrecorded: the transports and methods transcripts show it. */
  async quietly(work: () => Promise<unknown>): Promise<void> {
    this.recording = false;
    try {
      await work();
    } finally {
      this.recording = true;
    }
  }
  hide(secret: string, placeholder: string): string {
    this.placeholders.set(secret, placeholder);
    return secret;
  }
}

/**
 * The daemons here run calls on the in-process executor: the transcripts are the wire, which both
 * executors answer byte for byte alike (executors.test.ts), and a project-cli process per call is not
 * what they show. The two whose `initialize` result is printed keep the binary's default, which that
 * result names (`capabilities.executor`). The WebSocket sessions' daemons run in this process on the
 * binary's own listener (test/helpers/in-process.ts, whose executor is the in-process one); the
 * stdio and MCP ones are spawned, their pipes being the transport.
 */
const INPROCESS = ['--executor', 'inprocess'];

const env = () => ({ PATH: process.env.PATH ?? '', TOOLGATE_HOME: tempDir(), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET });

function stdio(rec: Recorder, args: string[] = [], executor: string[] = INPROCESS): ToolgateClient {
  return ToolgateClient.spawn({ command: [process.execPath, TOOLGATE_BIN], args: ['--db', join(tempDir(), 'toolgate.db'), ...executor, ...args], env: env(), tap: rec.tap() });
}

/** A request whose JSON-RPC error is part of the story: the error is recorded by the tap, not thrown. */
async function expectError(work: Promise<unknown>, code: number): Promise<void> {
  try {
    await work;
  } catch (err) {
    assert.ok(err instanceof ResponseError, String(err));
    assert.equal(err.code, code, err.message);
    return;
  }
  assert.fail(`expected JSON-RPC error ${code}`);
}

async function end(c: ToolgateClient): Promise<void> {
  await c.shutdown();
  await c.exit();
  assert.equal(await c.exited, 0, c.stderr());
}

// ───────────────────────────── the sessions ─────────────────────────────

async function transports(rec: Recorder): Promise<void> {
  const c = stdio(rec, [], []);
  const token = rec.hide(await mintBearer('alice', { name: 'Alice' }), '<bearer token>');
  await expectError(c.request('thread/list', { session_id: 'early' }), -32002);
  await c.initialize({ client_info: { name: 'example-host', version: '1.0.0' } });
  await expectError(c.request('initialize', { protocol_version: '1' }), -32600);
  const s = await c.openSession({ token });
  await expectError(c.request('thread/list', { session_id: 'no-such-session' }), -32001);
  await c.shutdown();
  await expectError(s.threads(), -32600);
  await c.exit();
  assert.equal(await c.exited, 0, c.stderr());
}

async function methods(rec: Recorder): Promise<void> {
  const c = stdio(rec, [], []);
  const token = rec.hide(await mintBearer('alice', { name: 'Alice' }), '<bearer token>');
  await expectError(c.request('thread/list', { session_id: 'early' }), -32002);
  await c.initialize({ client_info: { name: 'example-host', version: '1.0.0' } });
  const s = await c.openSession({ token });
  const thread = 'trip-planning';
  await s.skills();
  await s.append(thread, 'user', 'Remember that I prefer window seats.');
  await s.invoke(thread, 'call-1', { module: 'memory', method: 'update', input: { key: 'seat', content: 'prefers window seats' } });
  await s.invoke(thread, 'call-2', {
    module: 'calendar',
    method: 'create',
    input: {
      items: [
        { title: 'Flight to Lisbon', start_at: '2031-05-04T09:00:00+01:00', end_at: '2031-05-04T11:30:00+01:00' },
        { title: 'Hotel check-in', start_at: '2031-05-04T15:00:00+01:00', end_at: '2031-05-04T14:00:00+01:00' },
      ],
    },
  });
  await s.invoke(thread, 'call-3', { module: 'weather', method: 'read', input: {} });
  await s.append(thread, 'assistant', 'Saved your seat preference and booked the flight; the hotel check-in ends before it starts.', {
    status: 'partial',
    answer: 'Flight booked; hotel check-in needs a valid time.',
  });
  await s.history(thread, { view: 'context', limit: 3 });
  await s.history(thread, { view: 'ui', limit: 1 });
  await s.threads();
  await s.subscribe(thread);
  await s.unsubscribe(thread);
  await expectError(s.history('no-such-thread'), -32602);
  await end(c);
}

async function toolProtocol(rec: Recorder): Promise<void> {
  // A profile that may read the calendar but not write it, so one call is refused by the whitelist.
  const config = join(tempDir(), 'toolgate.config.json');
  writeFileSync(config, JSON.stringify({ agents: { default: { enabled_skills: ['calendar', 'memory'], allowed_actions: ['calendar.read', 'memory.*'] } } }));
  const c = stdio(rec, ['--config', config]);
  const token = rec.hide(await mintBearer('alice', { name: 'Alice' }), '<bearer token>');
  await rec.quietly(() => c.initialize({ client_info: { name: 'example-host', version: '1.0.0' } }));
  const s = await c.openSession({ token });
  const args = { module: 'memory', method: 'update', input: { key: 'seat', content: 'prefers window seats' } };
  const first = await s.invoke('t1', 'call-1', args);
  const again = await s.invoke('t1', 'call-1', args);
  assert.equal(again.content[0]!.text, first.content[0]!.text, 'a retry answers the same bytes');
  await s.invoke('t1', 'call-1', { ...args, input: { key: 'seat', content: 'aisle' } });
  await s.invoke('t1', 'call-2', {
    module: 'calendar',
    method: 'create',
    input: { title: 'Dentist', start_at: '2031-05-06T09:00:00+01:00', end_at: '2031-05-06T09:30:00+01:00' },
  });
  await s.invoke('t1', 'call-3', { module: 'calendar', method: 'read', input: { mode: 'day', date: 'tomorrow' } });
  await end(c);
}

async function notifications(rec: Recorder): Promise<void> {
  const host = await startInProcess({ transport: 'ws', db: join(tempDir(), 'toolgate.db') });
  try {
    const url = `ws://127.0.0.1:${host.port}/rpc`;
    const token = rec.hide(await mintBearer('alice', { name: 'Alice' }), '<bearer token>');
    const a = await ToolgateClient.connect(url, { tap: rec.tap('A'), token });
    const b = await ToolgateClient.connect(url, { tap: rec.tap('B'), token });
    await rec.quietly(() => a.initialize({ client_info: { name: 'host-a', version: '1.0.0' } }));
    await rec.quietly(() => b.initialize({ client_info: { name: 'host-b', version: '1.0.0' } }));
    const sa = await a.openSession();
    const sb = await b.openSession();
    await sb.subscribe('shared');
    const heard = new Promise<void>((resolve) => b.onToolResult(() => resolve()));
    await sa.invoke('shared', 'call-1', { module: 'memory', method: 'update', input: { key: 'lunch', content: 'no peanuts' } });
    await heard;
    await sb.unsubscribe('shared');
    await a.close();
    await b.close();
  } finally {
    await host.stop();
  }
}

/** Contract section 17: a call to an `ask` action waits on connection A until connection B approves it. */
async function approval(rec: Recorder): Promise<void> {
  const config = join(tempDir(), 'toolgate.config.json');
  const profile = { enabled_skills: ['memory'], allowed_actions: ['memory.*'], approval: { ask: ['memory.forget'], ttl_s: 600 } };
  writeFileSync(config, JSON.stringify({ agents: { default: profile } }));
  const host = await startInProcess({ transport: 'ws', db: join(tempDir(), 'toolgate.db'), args: ['--config', config] });
  try {
    const url = `ws://127.0.0.1:${host.port}/rpc`;
    const token = rec.hide(await mintBearer('alice', { name: 'Alice' }), '<bearer token>');
    const a = await ToolgateClient.connect(url, { tap: rec.tap('A'), token });
    const b = await ToolgateClient.connect(url, { tap: rec.tap('B'), token });
    await rec.quietly(() => a.initialize({ client_info: { name: 'agent-host', version: '1.0.0' } }));
    await rec.quietly(() => b.initialize({ client_info: { name: 'approver-ui', version: '1.0.0' } }));
    const sa = await a.openSession();
    const sb = await b.openSession();
    await sa.invoke('chat', 'call-1', { module: 'memory', method: 'update', input: { key: 'lunch', content: 'no peanuts' } });
    const asked = new Promise<P.ToolApprovalNotification>((resolve) => a.onToolApproval(resolve));
    const pending = sa.invoke('chat', 'call-2', { module: 'memory', method: 'forget', input: { key: 'lunch' } });
    const { args_sha256 } = await asked;
    await sb.call('chat', 'call-2');
    await sb.approve('chat', 'call-2', args_sha256);
    await pending;
    await a.close();
    await b.close();
  } finally {
    await host.stop();
  }
}

async function uiSchema(rec: Recorder): Promise<void> {
  const c = stdio(rec);
  const token = rec.hide(await mintBearer('alice', { name: 'Alice' }), '<bearer token>');
  await rec.quietly(() => c.initialize({ client_info: { name: 'example-host', version: '1.0.0' } }));
  const s = await c.openSession({ token });
  await s.invoke('week', 'call-1', {
    module: 'calendar',
    method: 'create',
    input: { title: 'Standup', start_at: '2031-05-05T09:30:00+02:00', end_at: '2031-05-05T09:45:00+02:00', location: 'Room 4' },
  });
  await s.invoke('week', 'call-2', { module: 'calendar', method: 'read', input: { mode: 'day', date: '2031-05-05', timezone: 'Europe/Berlin' } });
  await s.history('week', { view: 'ui', limit: 1 });
  await end(c);
}

async function security(rec: Recorder): Promise<void> {
  const c = stdio(rec);
  const token = rec.hide(await mintBearer('alice', { name: 'Alice' }), '<bearer token>');
  const forged = rec.hide(await mintBearer('alice', {}, { secret: 'not-the-daemon-secret-0123456789' }), '<a token signed with another secret>');
  const pasted = rec.hide(await mintBearer('mallory'), '<a JWT>');
  await rec.quietly(() => c.initialize({ client_info: { name: 'example-host', version: '1.0.0' } }));
  await expectError(c.openSession({ token: forged }), -32001);
  const s = await c.openSession({ token });
  await expectError(s.append('notes', 'user', `my token is ${pasted}`), -32602);
  const r = await s.invoke('notes', 'call-1', { module: 'memory', method: 'update', input: { key: 'token', content: `keep ${pasted} safe` } });
  assert.equal(r.status, 'failure');
  await expectError(s.history('notes'), -32602); // nothing was stored: the thread does not exist
  await end(c);
}


/** MCP over stdio, as MCP frames it (one JSON-RPC message per line), spoken raw so the transcript shows the wire. */
async function mcp(rec: Recorder): Promise<void> {
  const token = rec.hide(await mintBearer('alice', { name: 'Alice' }), '<bearer token>');
  const proc = spawn(process.execPath, [TOOLGATE_BIN, 'serve', '--mcp', '--db', join(tempDir(), 'toolgate.db'), ...INPROCESS], {
    env: { ...env(), TOOLGATE_MCP_TOKEN: token },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  const waiting = new Map<number, (m: Msg) => void>();
  createInterface({ input: proc.stdout }).on('line', (line) => {
    const m = JSON.parse(line) as Msg;
    rec.entries.push({ peer: '', dir: '<-', message: m });
    if (typeof m.id === 'number' && !('method' in m)) waiting.get(m.id)?.(m);
  });
  const send = (m: Msg) => {
    rec.entries.push({ peer: '', dir: '->', message: m });
    proc.stdin.write(`${JSON.stringify(m)}\n`);
  };
  const request = (id: number, method: string, params: Msg) =>
    new Promise<Msg>((resolve) => {
      waiting.set(id, resolve);
      send({ jsonrpc: '2.0', id, method, params });
    });
  await request(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'example-mcp-host', version: '1.0.0' } });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await request(2, 'tools/list', {});
  const call = (id: number, args: Msg) =>
    request(id, 'tools/call', { name: 'project_cli', arguments: args, _meta: { 'toolgate/thread_id': 'from-mcp', 'toolgate/tool_call_id': `call-${id}` } });
  const ok = await call(3, { module: 'memory', method: 'update', input: { key: 'seat', content: 'prefers window seats' } });
  assert.equal((ok.result as { isError?: boolean }).isError, false, stderr);
  await call(4, { module: 'calendar', method: 'read', input: { mode: 'day', date: 'tomorrow' } });
  proc.stdin.end();
  assert.equal(await exited, 0, stderr);
}

/** The AG-UI stream of a thread, as the HTTP response carries it: replayed here, after the thread was written over WebSocket. */
async function agUi(rec: Recorder): Promise<string> {
  const host = await startInProcess({ transport: 'ws', db: join(tempDir(), 'toolgate.db') });
  try {
    const token = rec.hide(await mintBearer('alice', { name: 'Alice' }), '<bearer token>');
    const c = await ToolgateClient.connect(`ws://127.0.0.1:${host.port}/rpc`, { token });
    await c.initialize();
    const s = await c.openSession();
    await s.append('standup', 'user', 'Book the standup on Monday at 9:30.');
    const call = await s.invoke('standup', 'call-1', {
      module: 'calendar',
      method: 'create',
      input: { title: 'Standup', start_at: '2031-05-05T09:30:00+02:00', end_at: '2031-05-05T09:45:00+02:00' },
    });
    await s.append('standup', 'assistant', 'Booked: Standup, Monday 9:30–9:45.');
    await c.close();
    const path = '/threads/standup/events';
    const { status, headers, body } = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: host.port, path, headers: { authorization: `Bearer ${token}` } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          // Three stored messages, three runs: the replay is complete; the stream would stay open for live events.
          if ((text.match(/^event: RUN_FINISHED$/gm) ?? []).length === 3 && text.endsWith('\n\n')) {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text });
          }
        });
      });
      req.on('error', (err) => (err.message.includes('socket hang up') ? undefined : reject(err)));
      req.end();
    });
    assert.equal(status, 200);
    const events = [...body.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as Msg);
    const result = events.find((e) => e.type === 'TOOL_CALL_RESULT')!;
    assert.equal(result.content, call.content[0]!.text, 'TOOL_CALL_RESULT carries the text tool/invoke returned');
    assert.deepEqual(validator.check('UiSchema', result.ui_schema), []);
    const shown = ['content-type', 'cache-control', 'x-accel-buffering'].map((h) => `${h}: ${String(headers[h])}`);
    return normaliseText(
      ['```http', `GET ${path} HTTP/1.1`, `Authorization: Bearer ${token}`, '```', '', '```http', 'HTTP/1.1 200 OK', ...shown, '```', '', '```', body.trimEnd(), '```', ''].join('\n'),
      rec.placeholders,
    );
  } finally {
    await host.stop();
  }
}

/** `mcp`: MCP's own messages, checked by the MCP SDK's tests; here only what toolgate puts in them. */
const SESSIONS: Array<{ name: string; page: string; run: (rec: Recorder) => Promise<void | string>; mcp?: boolean }> = [
  { name: 'transports', page: 'transports.md', run: transports },
  { name: 'methods', page: 'methods.md', run: methods },
  { name: 'tool-protocol', page: 'tool-protocol.md', run: toolProtocol },
  { name: 'notifications', page: 'notifications.md', run: notifications },
  { name: 'ui-schema', page: 'ui-schema.md', run: uiSchema },
  { name: 'security', page: 'security.md', run: security },
  { name: 'mcp', page: 'mcp.md', run: mcp, mcp: true },
  { name: 'ag-ui', page: 'ag-ui.md', run: agUi },
  { name: 'approval', page: 'approval.md', run: approval },
];

// ───────────────────────────── normalising and rendering ─────────────────────────────

/** Tokens → placeholders; random ids and the daemon's clock → stable values, numbered by first appearance. */
const ICONS_DIR = join(REPO_ROOT, 'assets', 'icons');
const ICONS = readdirSync(ICONS_DIR).map((file) => [readFileSync(join(ICONS_DIR, file)).toString('base64'), file] as const);

function normaliseText(text: string, placeholders: Map<string, string>): string {
  for (const [secret, placeholder] of placeholders) text = text.split(secret).join(placeholder);
  const numbered = new Map<string, string>();
  const counters = new Map<string, number>();
  text = text.replace(/(?<![A-Za-z0-9])(ses|msg|evt|inv|job)_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, (id, prefix: string) => {
    if (!numbered.has(id)) {
      const n = (counters.get(prefix) ?? 0) + 1;
      counters.set(prefix, n);
      numbered.set(id, `${prefix}_${String(n).padStart(4, '0')}`);
    }
    return numbered.get(id)!;
  });
  // The daemon's clock: only it writes UTC instants with milliseconds (the sessions' inputs use offsets).
  // One fixed instant, not one per distinct value: two writes may or may not share a millisecond.
  text = text.replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\b/g, '2031-01-01T12:00:00.000Z');
  // MCP log messages say how long a call took.
  text = text.replace(/"ms":\d+\b/g, '"ms":250');
  // AG-UI events carry the message's created_at in epoch milliseconds.
  text = text.replace(/"timestamp":\d{13}\b/g, `"timestamp":${Date.UTC(2031, 0, 1, 12)}`);
  // MCP icons are data: URIs of the package's SVGs: named by their file, not shown as base64.
  for (const [base64, file] of ICONS) text = text.split(base64).join(`<base64 of assets/icons/${file}>`);
  return text;
}

function normalise(rec: Recorder): Entry[] {
  return JSON.parse(normaliseText(JSON.stringify(rec.entries), rec.placeholders)) as Entry[];
}

function label(e: Entry): string {
  const host = e.peer ? `host ${e.peer}` : 'host';
  if (e.dir === '->') return `${host} → daemon${e.message.id === undefined ? ' (notification)' : ''}`;
  return `daemon → ${host}${e.message.method ? ' (notification)' : ''}`;
}

function render(entries: Entry[]): string {
  const peers = [...new Set(entries.map((e) => e.peer))];
  const out: string[] = [];
  for (const peer of peers) {
    if (peer) out.push(`**Connection ${peer}**`, '');
    for (const e of entries.filter((x) => x.peer === peer)) out.push(`${label(e)}:`, '', '```json', JSON.stringify(e.message, null, 2), '```', '');
  }
  return out.join('\n');
}

const markers = (name: string) => [`<!-- transcript:${name} -->\n`, `<!-- /transcript:${name} -->`] as const;

function documentedBlock(page: string, name: string): string {
  const text = readFileSync(join(DOCS, page), 'utf8');
  const [open, close] = markers(name);
  const start = text.indexOf(open);
  const stop = text.indexOf(close);
  assert.ok(start >= 0 && stop > start, `docs/protocols/${page} has the markers of transcript ${name}`);
  return text.slice(start + open.length, stop);
}

function writeBlock(page: string, name: string, block: string): void {
  const path = join(DOCS, page);
  const text = readFileSync(path, 'utf8');
  const [open, close] = markers(name);
  const start = text.indexOf(open);
  const stop = text.indexOf(close);
  writeFileSync(path, text.slice(0, start + open.length) + block + text.slice(stop));
}

/** The messages of a rendered block, with the direction each is labelled with. */
function parse(block: string): Array<['->' | '<-', string, Msg]> {
  return [...block.matchAll(/^(host(?: (\w))? → daemon|daemon → host(?: (\w))?)[^\n]*:\n\n```json\n([\s\S]*?)\n```/gm)].map((b) => [
    b[1]!.startsWith('host') ? '->' : '<-',
    b[2] ?? b[3] ?? '',
    JSON.parse(b[4]!) as Msg,
  ]);
}

/** MCP: `tools/call` arguments are ToolCallArgs, `structuredContent` a ToolProjection and `content[0].text` its JSON. */
function checkMcpShapes(messages: Array<['->' | '<-', string, Msg]>): string[] {
  const problems: string[] = [];
  const calls = new Set<unknown>();
  for (const [dir, , m] of messages) {
    if (dir === '->' && m.method === 'tools/call') {
      calls.add(m.id);
      for (const e of validator.check('ToolCallArgs', (m.params as Msg).arguments)) problems.push(`tools/call arguments: ${e}`);
    } else if (dir === '<-' && calls.has(m.id) && 'result' in m) {
      const r = m.result as { structuredContent?: unknown; content?: Array<{ text?: string }> };
      for (const e of validator.check('ToolProjection', r.structuredContent)) problems.push(`tools/call structuredContent: ${e}`);
      if (r.content?.[0]?.text !== JSON.stringify(r.structuredContent)) problems.push('tools/call: content[0].text is not the JSON of structuredContent');
    }
  }
  return problems;
}

/** Every message against schemas/: requests by their params shape, results by their method's result shape. */
function checkShapes(messages: Array<['->' | '<-', string, Msg]>): string[] {
  const problems: string[] = [];
  const methodOf = new Map<string, string>();
  const check = (shape: string | null, value: unknown, what: string) => {
    if (!shape) return;
    for (const e of validator.check(shape, value)) problems.push(`${what}: ${e}`);
  };
  for (const [dir, peer, m] of messages) {
    const method = typeof m.method === 'string' ? m.method : undefined;
    const key = `${peer}:${JSON.stringify(m.id)}`;
    if (dir === '->' && method) {
      const spec = (P.REQUESTS as Record<string, { paramsId: string | null }>)[method];
      if (m.id !== undefined) methodOf.set(key, method);
      // Requests made to show their error (too early, unknown session, after shutdown) keep free params.
      if (spec && m.id !== undefined && 'params' in m && method !== 'thread/list') check(spec.paramsId, m.params, `${method} params`);
    } else if (dir === '<-' && method === 'tool/result') check('ToolResultNotification', m.params, 'tool/result');
    else if (dir === '<-' && method === 'tool/approval') check('ToolApprovalNotification', m.params, 'tool/approval');
    else if (dir === '<-' && 'result' in m) {
      const spec = (P.REQUESTS as Record<string, { resultId: string }>)[methodOf.get(key) ?? ''];
      if (!spec) problems.push(`a result for no recorded request (id ${key})`);
      else check(spec.resultId, m.result, `${methodOf.get(key)} result`);
    } else if (dir === '<-' && 'error' in m) check('RpcError', m.error, 'error');
  }
  return problems;
}

for (const { name, page, run, mcp: isMcp } of SESSIONS) {
  const shapes = isMcp ? checkMcpShapes : checkShapes;
  test(`transcript ${name}: the session validates against schemas/ and docs/protocols/${page} shows exactly it`, async () => {
    const rec = new Recorder();
    const raw = await run(rec);
    const live = typeof raw === 'string' ? raw : render(normalise(rec));
    if (typeof raw !== 'string') {
      const messages = parse(live);
      assert.equal(messages.length, rec.entries.length, 'every recorded message is rendered and parses back');
      assert.deepEqual(shapes(messages), []);
    }
    for (const secret of rec.placeholders.keys()) assert.ok(!live.includes(secret.split('.')[2]!), 'no token signature in the transcript');
    if (WRITE) writeBlock(page, name, live);
    const documented = documentedBlock(page, name);
    if (typeof raw !== 'string') assert.deepEqual(shapes(parse(documented)), [], `the documented transcript of docs/protocols/${page} validates`);
    assert.equal(documented, live, `docs/protocols/${page} shows another session than this run: \`npm run docs:transcripts\` rewrites it`);
  });
}
