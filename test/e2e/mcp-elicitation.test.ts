/**
 * An MCP host that declared form elicitation calls an action its profile asks before (approval.md): the host's
 * own user decides. With the official SDK client and an `elicitation/create` handler, from outside: over stdio
 * and sessionful HTTP (2025-11-25: the server asks with `elicitation/create`) and sessionless HTTP 2026-07-28
 * (an `input_required` result; the client retries with the answer and the signed `requestState`). Accept runs
 * the call once, decline denies it, cancel cancels it; every decision is audited with surface `mcp`. Raw
 * 2026-07-28 requests check that a forged state, another user's retry and a retry with other arguments decide
 * nothing.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectMcp, type ElicitAnswer, type McpHost, type McpKind } from '../helpers/mcp-hosts.js';
import { startHost, type Host } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import { dbCount, dbRows } from '../helpers/db.js';
import { tempDir } from '../helpers/repo.js';
import { waitFor } from '../helpers/wait-for.js';
import type { MemoryForgetData, MemoryReadData, RpcError, ToolError, ToolResponse } from '../../src/protocol/index.js';

interface CallResult {
  content: ToolResponse['content'];
  structuredContent?: { status: string; data?: Partial<MemoryForgetData & MemoryReadData>; error?: ToolError };
  isError?: boolean;
}

function askConfig(): string {
  const file = join(tempDir(), 'toolgate.config.json');
  writeFileSync(file, JSON.stringify({ agents: { default: { enabled_skills: ['memory'], allowed_actions: ['memory.*'], approval: { ask: ['memory.forget'] } } } }));
  return file;
}

/**
 * One daemon on the ask profile for the three hosts deciding on an ask call and the raw 2026-07-28 suite
 * (each suite its own user or tool_call_ids, so their rows never meet), started by the first that needs it.
 */
let sharedAsk: Promise<{ daemon: Host; config: string }> | undefined;
const askDaemon = () =>
  (sharedAsk ??= (async () => {
    const config = askConfig();
    return { daemon: await startHost({ transport: 'ws', args: ['--executor', 'inprocess', '--config', config] }), config };
  })());
after(async () => {
  await (await sharedAsk)?.daemon.stop();
});

const call = (mcp: McpHost, thread: string, id: string, module: string, method: string, input: Record<string, unknown>) =>
  mcp.client.callTool({ name: 'project_cli', arguments: { module, method, input }, _meta: { 'toolgate/thread_id': thread, 'toolgate/tool_call_id': id } }) as Promise<CallResult>;

for (const kind of ['stdio', 'http', 'http-2026'] as const satisfies readonly McpKind[]) {
  describe(`MCP over ${kind} with elicitation: the host's user decides on an ask call`, () => {
    let mcp: McpHost;
    let dbPath: string;
    const thread = `elicit-${kind}`;
    /** What the host's user answers next, and every message it was shown. */
    let answer: ElicitAnswer = { action: 'cancel' };
    const shown: string[] = [];

    before(async () => {
      const { daemon, config } = await askDaemon();
      dbPath = daemon.dbPath;
      const token = await mintBearer('elicit-user');
      const elicit = (params: { message: string }) => {
        shown.push(params.message);
        return answer;
      };
      mcp = await connectMcp(kind, { token, port: daemon.port!, dbPath, args: ['--config', config], elicit });
    });
    after(async () => {
      await mcp?.close();
    });

    const remember = async (key: string) => {
      const r = await call(mcp, thread, `save-${key}`, 'memory', 'update', { key, content: 'keep me' });
      assert.equal(r.structuredContent?.status, 'success', r.content[0]?.text);
    };
    const recall = async (key: string) => {
      const r = await call(mcp, thread, `read-${key}-${Math.random()}`, 'memory', 'read', { key });
      return r.structuredContent?.data?.items?.find((m) => m.key === key)?.content;
    };
    const audit = (id: string) =>
      dbRows<{ decision: string; surface: string }>(dbPath, 'SELECT decision, surface FROM approval_audit WHERE tool_call_id = ? ORDER BY seq', [id]);

    test('accept: the call runs once and tools/call answers with its outcome', async () => {
      await remember('accept-me');
      answer = { action: 'accept', content: {} };
      const before = shown.length;
      const result = await call(mcp, thread, `elicit-accept-${kind}`, 'memory', 'forget', { key: 'accept-me' });
      assert.notEqual(result.isError, true, result.content[0]?.text);
      assert.deepEqual([result.structuredContent?.status, result.structuredContent?.data?.forgotten], ['success', true]);
      assert.equal(shown.length, before + 1, 'the user was asked once');
      assert.match(shown.at(-1)!, /memory\.forget/);
      assert.match(shown.at(-1)!, /accept-me/, 'the exact arguments are shown');
      assert.equal(await recall('accept-me'), undefined);
      assert.deepEqual(await audit(`elicit-accept-${kind}`), [{ decision: 'approve', surface: 'mcp' }]);
    });

    test('decline: APPROVAL_DENIED, nothing written', async () => {
      await remember('decline-me');
      answer = { action: 'decline' };
      const result = await call(mcp, thread, `elicit-decline-${kind}`, 'memory', 'forget', { key: 'decline-me' });
      assert.equal(result.isError, true);
      assert.equal(result.structuredContent?.error?.code, 'APPROVAL_DENIED', result.content[0]?.text);
      assert.equal(await recall('decline-me'), 'keep me');
      assert.deepEqual(await audit(`elicit-decline-${kind}`), [{ decision: 'deny', surface: 'mcp' }]);
    });

    test('cancel: CANCELLED, nothing written', async () => {
      await remember('cancel-me');
      answer = { action: 'cancel' };
      const result = await call(mcp, thread, `elicit-cancel-${kind}`, 'memory', 'forget', { key: 'cancel-me' });
      assert.equal(result.isError, true);
      assert.equal(result.structuredContent?.error?.code, 'CANCELLED', result.content[0]?.text);
      assert.equal(await recall('cancel-me'), 'keep me');
      assert.deepEqual(await audit(`elicit-cancel-${kind}`), [{ decision: 'cancel', surface: 'mcp' }]);
    });
  });
}

describe('MCP 2026-07-28 input_required: the retry is bound to the call by the signed requestState', () => {
  let daemon: Host;
  let token: string;
  let next = 0;
  const thread = 'elicit-raw';

  before(async () => {
    ({ daemon } = await askDaemon());
    token = await mintBearer('raw-elicit-user');
  });

  interface Answer {
    result?: {
      resultType?: string;
      requestState?: string;
      inputRequests?: Record<string, { method: string; params: { message: string; mode?: string } }>;
      taskId?: string;
      status?: string;
      result?: CallResult;
    } & Partial<CallResult>;
    error?: RpcError;
  }

  const TASKS = 'io.modelcontextprotocol/tasks';

  /** One 2026-07-28 request; `tasks` declares the Tasks extension beside form elicitation. */
  async function send(bearer: string, method: string, params: Record<string, unknown>, tasks = false): Promise<Answer> {
    const id = ++next;
    const capabilities = { elicitation: { form: {} }, ...(tasks ? { extensions: { [TASKS]: {} } } : {}) };
    const body = {
      jsonrpc: '2.0',
      id,
      method,
      params: {
        ...params,
        _meta: {
          'toolgate/thread_id': thread,
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw-host', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': capabilities,
        },
      },
    };
    const name = typeof params.name === 'string' ? params.name : typeof params.taskId === 'string' ? params.taskId : undefined;
    const res = await fetch(`http://127.0.0.1:${daemon.port}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${bearer}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': method,
        ...(name ? { 'mcp-name': name } : {}),
      },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    const messages = (res.headers.get('content-type') ?? '').includes('text/event-stream')
      ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)) as Answer & { id?: unknown })
      : [JSON.parse(text) as Answer & { id?: unknown }];
    return messages.find((m) => m.id === id) ?? { error: { code: res.status, message: text } };
  }

  const toolsCall = (bearer: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    send(bearer, 'tools/call', { name: 'project_cli', arguments: args, ...extra });

  /** The tool_call_id a request state names (its signed payload, read without verifying). */
  const stateCall = (state: string): string => {
    const jws = JSON.parse(Buffer.from(state, 'base64url').toString('utf8')) as { payload: string };
    return (JSON.parse(Buffer.from(jws.payload, 'base64url').toString('utf8')) as { c: string }).c;
  };

  const forget = (key: string) => ({ module: 'memory', method: 'forget', input: { key } });
  const accepted = { inputResponses: { approval: { action: 'accept', content: {} } } };
  const remember = async (key: string) => {
    const saved = await toolsCall(token, { module: 'memory', method: 'update', input: { key, content: 'keep me' } });
    assert.equal(saved.result?.structuredContent?.status, 'success', JSON.stringify(saved));
  };

  test('the first answer asks: one form elicitation with the arguments, and an opaque signed state', async () => {
    await remember('raw-1');
    const first = await toolsCall(token, forget('raw-1'));
    assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first));
    const request = first.result!.inputRequests!.approval!;
    assert.equal(request.method, 'elicitation/create');
    assert.equal(request.params.mode, 'form');
    assert.match(request.params.message, /memory\.forget.*raw-1/);
    const state = first.result!.requestState!;
    assert.match(state, /^[A-Za-z0-9_-]+$/, 'one base64url run: no dots, nothing a scanner takes for a token');
    // Asked again without an answer: it asks again (the call stays pending).
    const again = await toolsCall(token, forget('raw-1'), { requestState: state });
    assert.equal(again.result?.resultType, 'input_required', JSON.stringify(again));
    // Accepted: the call runs, and the retry gets its outcome.
    const done = await toolsCall(token, forget('raw-1'), { ...accepted, requestState: state });
    assert.equal(done.result?.resultType, 'complete', JSON.stringify(done));
    assert.equal(done.result?.structuredContent?.status, 'success', JSON.stringify(done));
    assert.equal(done.result?.structuredContent?.data?.forgotten, true);
  });

  test('a forged or altered state is refused (-32602) and decides nothing', async () => {
    const first = await toolsCall(token, forget('raw-2'));
    const state = first.result!.requestState!;
    const decoded = JSON.parse(Buffer.from(state, 'base64url').toString('utf8')) as { payload: string };
    const payload = JSON.parse(Buffer.from(decoded.payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const altered = Buffer.from(JSON.stringify({ ...decoded, payload: Buffer.from(JSON.stringify({ ...payload, c: 'another-call' })).toString('base64url') })).toString('base64url');
    for (const bad of [altered, 'bm90IGEgc3RhdGU', `${state}x`]) {
      const refused = await toolsCall(token, forget('raw-2'), { ...accepted, requestState: bad });
      assert.equal(refused.error?.code, -32602, JSON.stringify(refused));
    }
    const approvals = await dbCount(daemon.dbPath, "SELECT count(*) AS n FROM approval_audit WHERE decision = 'approve' AND thread_id = ?", [thread]);
    assert.equal(approvals, 1, 'only the first test approved a call');
  });

  test("another user's retry, or a retry with other arguments, decides nothing", async () => {
    await remember('raw-3');
    const first = await toolsCall(token, forget('raw-3'));
    const state = first.result!.requestState!;
    const callId = stateCall(state);
    const other = await toolsCall(await mintBearer('someone-else'), forget('raw-3'), { ...accepted, requestState: state });
    assert.match(JSON.stringify(other), /names no call of this user/);
    const changed = await toolsCall(token, forget('raw-3-other'), { ...accepted, requestState: state });
    assert.match(JSON.stringify(changed), /arguments of this retry are not those of the call/);
    // Nothing was decided: no audit row, no stored outcome, the call still pending.
    assert.equal(await dbCount(daemon.dbPath, 'SELECT count(*) AS n FROM approval_audit WHERE tool_call_id = ?', [callId]), 0);
    assert.equal(await dbCount(daemon.dbPath, 'SELECT count(*) AS n FROM messages WHERE tool_call_id = ?', [callId]), 0);
    assert.equal(await dbCount(daemon.dbPath, "SELECT count(*) AS n FROM calls WHERE tool_call_id = ? AND state = 'awaiting_approval'", [callId]), 1);
    // Still pending: the rightful retry decides it.
    const done = await toolsCall(token, forget('raw-3'), { ...accepted, requestState: state });
    assert.equal(done.result?.structuredContent?.status, 'success', JSON.stringify(done));
  });
  for (const [action, status, code] of [['accept', 'completed', undefined], ['decline', 'completed', 'APPROVAL_DENIED'], ['cancel', 'cancelled', undefined]] as const) {
    test(`a task awaiting approval carries the question in tasks/get; tasks/update ${action} decides it`, async () => {
      const key = `task-${action}`;
      await remember(key);
      const created = await send(token, 'tools/call', { name: 'project_cli', arguments: forget(key) }, true);
      assert.equal(created.result?.resultType, 'task', JSON.stringify(created));
      const taskId = created.result!.taskId!;
      const asking = await waitFor(async () => {
        const got = await send(token, 'tasks/get', { taskId }, true);
        return got.result?.status === 'input_required' ? got : undefined;
      }, 'the task to await input');
      const request = asking.result!.inputRequests!.approval!;
      assert.equal(request.method, 'elicitation/create');
      assert.match(request.params.message, new RegExp(`memory\\.forget.*${key}`));
      const ack = await send(token, 'tasks/update', { taskId, inputResponses: { approval: { action, ...(action === 'accept' ? { content: {} } : {}) } } }, true);
      assert.deepEqual(Object.keys(ack.result ?? { error: ack.error }).filter((k) => k !== '_meta' && k !== 'resultType'), [], JSON.stringify(ack));
      const ended = await waitFor(async () => {
        const got = await send(token, 'tasks/get', { taskId }, true);
        return got.result?.status !== 'input_required' && got.result?.status !== 'working' ? got : undefined;
      }, 'the task to end');
      assert.equal(ended.result?.status, status, JSON.stringify(ended));
      if (action === 'accept') assert.equal(ended.result?.result?.structuredContent?.status, 'success', JSON.stringify(ended));
      if (code) assert.equal(ended.result?.result?.structuredContent?.error?.code, code, JSON.stringify(ended));
      const decision = { accept: 'approve', decline: 'deny', cancel: 'cancel' }[action];
      const [, toolCallId] = JSON.parse(Buffer.from(taskId, 'base64url').toString('utf8')) as [string, string];
      const audited = await dbRows<{ decision: string; surface: string }>(daemon.dbPath, 'SELECT decision, surface FROM approval_audit WHERE tool_call_id = ?', [toolCallId]);
      assert.deepEqual(audited.map((r) => [r.decision, r.surface]), [[decision, 'mcp']]);
    });
  }
});

/**
 * 2025-11-25: the server's `elicitation/create` is still open in the host when the call is decided elsewhere
 * (another surface, or its ttl): the `tools/call` answers with that outcome then, and the host's question is
 * withdrawn (`notifications/cancelled` for it), rather than wait for an answer that can change nothing. A host
 * that cancels its `tools/call` while its user is asked cancels the call, as `notifications/cancelled` does.
 */
for (const kind of ['stdio', 'http'] as const satisfies readonly McpKind[]) {
  describe(`MCP over ${kind} with elicitation: a call decided while its host's user is asked`, () => {
    let daemon: Host;
    let mcp: McpHost;
    let token: string;
    let sessionId: string;
    /** The questions shown and not answered yet: each answers when the test says so (or at the end). */
    const open: Array<(a: ElicitAnswer) => void> = [];
    const thread = `elicit-open-${kind}`;

    before(async () => {
      const config = askConfig();
      daemon = await startHost({ transport: 'ws', args: ['--executor', 'inprocess', '--config', config] });
      token = await mintBearer('elicit-open-user');
      mcp = await connectMcp(kind, { token, port: daemon.port!, dbPath: daemon.dbPath, args: ['--config', config], elicit: () => new Promise<ElicitAnswer>((resolve) => open.push(resolve)) });
      await daemon.request('initialize', { protocol_version: '1', client_info: { name: 'approver', version: '0' } });
      sessionId = (await daemon.request<{ session_id: string }>('session/open', { auth: { type: 'bearer', token } })).session_id;
    });
    after(async () => {
      for (const answer of open.splice(0)) answer({ action: 'cancel' });
      await mcp?.close();
      await daemon?.stop();
    });

    const remember = async (key: string) => {
      const r = await call(mcp, thread, `save-${key}`, 'memory', 'update', { key, content: 'keep me' });
      assert.equal(r.structuredContent?.status, 'success', r.content[0]?.text);
    };
    const withdrawn = (before: number) =>
      waitFor(() => mcp.wire.slice(before).some((m) => m.method === 'notifications/cancelled'), 'the question to be withdrawn');
    /** The tool call's answer, or a failure once waitFor's ceiling passes: it must not wait for the host's user. */
    const answered = async (work: Promise<CallResult>) => {
      let done = false;
      const settled = work.finally(() => (done = true));
      return Promise.race([settled, waitFor(() => done, 'the tools/call to answer without its host user').then(() => settled)]);
    };

    test('denied on JSON-RPC while the host asks: tools/call answers APPROVAL_DENIED at once, the question withdrawn', async () => {
      await remember('deny-open');
      const shown = open.length;
      const before = mcp.wire.length;
      const pending = call(mcp, thread, 'open-deny', 'memory', 'forget', { key: 'deny-open' });
      await waitFor(() => open.length > shown, 'the host to be asked');
      const got = await daemon.request<{ args_sha256: string }>('call/get', { session_id: sessionId, thread_id: thread, tool_call_id: 'open-deny' });
      await daemon.request('call/deny', { session_id: sessionId, thread_id: thread, tool_call_id: 'open-deny', args_sha256: got.args_sha256, reason: 'not this one' });
      const result = await answered(pending);
      assert.equal(result.structuredContent?.error?.code, 'APPROVAL_DENIED', result.content[0]?.text);
      if (kind === 'stdio') await withdrawn(before);
      assert.equal(await dbCount(daemon.dbPath, "SELECT count(*) AS n FROM memories WHERE key = 'deny-open'"), 1, 'nothing forgotten');
    });

    test('the host cancels its tools/call while its user is asked: the call ends CANCELLED, nothing written', async () => {
      await remember('cancel-open');
      const shown = open.length;
      const abort = new AbortController();
      const pending = mcp.client
        .callTool({ name: 'project_cli', arguments: { module: 'memory', method: 'forget', input: { key: 'cancel-open' } }, _meta: { 'toolgate/thread_id': thread, 'toolgate/tool_call_id': 'open-cancel' } }, { signal: abort.signal })
        .catch(() => undefined);
      await waitFor(() => open.length > shown, 'the host to be asked');
      abort.abort();
      await pending;
      const ended = await waitFor(async () => {
        const got = await daemon.request<{ state: string; outcome?: ToolResponse }>('call/get', { session_id: sessionId, thread_id: thread, tool_call_id: 'open-cancel' });
        return got.state === 'done' ? got : undefined;
      }, 'the call to end');
      assert.match(ended.outcome!.content[0]!.text, /"code":"CANCELLED"/);
      const audited = await dbRows<{ decision: string; surface: string }>(daemon.dbPath, "SELECT decision, surface FROM approval_audit WHERE tool_call_id = 'open-cancel'");
      assert.deepEqual(audited.map((r) => [r.decision, r.surface]), [['cancel', 'cancel_request']]);
      assert.equal(await dbCount(daemon.dbPath, "SELECT count(*) AS n FROM memories WHERE key = 'cancel-open'"), 1, 'nothing forgotten');
    });
  });
}

test('2025-11-25: a call that expires while its host\'s user is asked answers APPROVAL_EXPIRED, the question withdrawn (stdio)', { timeout: 60_000 }, async () => {
  const config = join(tempDir(), 'toolgate.config.json');
  writeFileSync(config, JSON.stringify({ agents: { default: { enabled_skills: ['memory'], allowed_actions: ['memory.*'], approval: { ask: ['memory.forget'], ttl_s: 1 } } } }));
  const daemon = await startHost({ transport: 'ws', args: ['--executor', 'inprocess', '--config', config] });
  const open: Array<(a: ElicitAnswer) => void> = [];
  const mcp = await connectMcp('stdio', { token: await mintBearer('elicit-expiry'), port: daemon.port!, dbPath: daemon.dbPath, args: ['--config', config], elicit: () => new Promise<ElicitAnswer>((resolve) => open.push(resolve)) });
  try {
    let done = false;
    const pending = call(mcp, 'expiry', 'open-expire', 'memory', 'forget', { key: 'k' }).finally(() => (done = true));
    // Never answered by the host's user: the call's own expiry ends the wait (or waitFor's ceiling fails the test).
    const result = await Promise.race([pending, waitFor(() => done, 'the tools/call to answer at its expiry').then(() => pending)]);
    assert.equal(result.structuredContent?.error?.code, 'APPROVAL_EXPIRED', result.content[0]?.text);
    assert.equal(open.length, 1, 'its host was asked once');
    await waitFor(() => mcp.wire.some((m) => m.method === 'notifications/cancelled'), 'the question to be withdrawn');
  } finally {
    for (const answer of open.splice(0)) answer({ action: 'cancel' });
    await mcp.close();
    await daemon.stop();
  }
});
