/**
 * MCP from the side of a host author, with the SDK's own Client, over every
 * MCP transport toolgate serves: stdio (`serve --mcp`), Streamable HTTP
 * sessionful (2025-11-25, `Mcp-Session-Id`) and sessionless (2026-07-28).
 * Each case checks what a host relies on: one tool, skills readable through
 * the Skills extension and plain resources, the projection byte-identical to
 * `tool/invoke`, structuredContent, progress, tool errors a model can
 * correct, and the call in history.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { connectMcp, MCP_KINDS, type McpHost, type McpKind } from '../helpers/mcp-hosts.js';
import { openSession, startHost, type Client, type Host } from '../helpers/host.js';
import { REPO_ROOT } from '../helpers/repo.js';
import { mintBearer } from '../helpers/tokens.js';
import type { HistoryMessage, ToolResponse } from '../../src/protocol/index.js';
import { TOOL_OUTPUT_JSON_SCHEMA } from '../../src/mcp/mcp-server.js';
import { assertWireShape } from '../helpers/wire-validator.js';

interface Structured {
  status: string;
  module?: string;
  method?: string;
  data?: { event?: { id: string; owner_id: string }; items?: unknown[] };
  error?: { code: string; input_schema?: unknown; module: string | null; method: string | null };
}
interface CallResult {
  content: ToolResponse['content'];
  structuredContent?: Structured;
  isError?: boolean;
}

const EVENT = { title: 'Via MCP', start_at: '2026-05-05T09:00:00Z', end_at: '2026-05-05T10:00:00Z' };
const skillFile = (name: string, file = 'SKILL.md') => readFileSync(join(REPO_ROOT, 'skills', name, file), 'utf8');

async function call(mcp: McpHost, args: unknown, extra: { meta?: Record<string, unknown>; onprogress?: (p: unknown) => void } = {}): Promise<CallResult> {
  return (await mcp.client.callTool(
    { name: 'project_cli', arguments: args as Record<string, unknown>, ...(extra.meta ? { _meta: extra.meta } : {}) },
    extra.onprogress ? { onprogress: extra.onprogress } : {},
  )) as CallResult;
}

/**
 * One `serve --ws` daemon for every transport below: it holds the database (stdio's `serve --mcp`
 * shares its file) and serves HTTP. Each transport acts as a user of its own, so what one stores
 * is not another's. Stopped after the file; no token of any of them is ever in its log.
 */
let shared: Promise<Host> | undefined;
const tokens: string[] = [];
after(async () => {
  const daemon = await shared;
  await daemon?.stop();
  for (const token of tokens) assert.ok(!daemon!.stderr().includes(token.split('.')[2]!), 'the token is never logged');
});

for (const kind of MCP_KINDS) {
  describe(`MCP over ${kind}`, () => {
    let daemon: Host;
    let ws: Client;
    let wsSession: string;
    let mcp: McpHost;
    const user = `mia-${kind}`;
    let token: string;

    before(async () => {
      token = await mintBearer(user, { name: 'Mia' });
      tokens.push(token);
      // The in-process executor: these cases are MCP's; an MCP call through a project-cli process is
      // e2e/call-lifecycle's and e2e/mcp-tasks' (the executors answer alike: e2e/executors).
      daemon = await (shared ??= startHost({ transport: 'ws', args: ['--executor', 'inprocess'] }));
      ws = daemon;
      wsSession = (await openSession(ws, token)).session_id;
      mcp = await connectMcp(kind as McpKind, { token, port: daemon.port!, dbPath: daemon.dbPath, args: ['--executor', 'inprocess'] });
    });
    after(async () => {
      await mcp?.close();
      assert.ok(!mcp.stderr().includes(token.split('.')[2]!), 'the token is never logged');
    });

    test('initialize advertises tools, resources, prompts, logging and the Skills extension', () => {
      const caps = mcp.client.getServerCapabilities()!;
      assert.ok(caps.tools && caps.resources && caps.prompts && caps.logging);
      assert.ok((caps as { extensions?: Record<string, unknown> }).extensions?.['io.modelcontextprotocol/skills']);
    });

    test('tools/list: exactly project_cli, thin input schema, output schema, annotations, a description naming the skills', async () => {
      const { tools } = await mcp.client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['project_cli']);
      const tool = tools[0]!;
      assert.deepEqual([...(tool.inputSchema.required ?? [])].sort(), ['input', 'method', 'module']);
      assert.deepEqual(Object.keys(tool.inputSchema.properties ?? {}).sort(), ['input', 'method', 'module']);
      // The output schema is ToolProjection of src/protocol, generated, self-contained (no $defs to follow),
      // object-rooted and written portably (mcp-server.ts; test/unit/mcp/mcp-output-schema.test.ts checks the rules).
      assert.deepEqual(tool.outputSchema, TOOL_OUTPUT_JSON_SCHEMA);
      assert.equal((tool.outputSchema as { type?: string }).type, 'object');
      assert.ok(!JSON.stringify(tool.outputSchema).includes('$ref'), 'no $ref for a client to resolve');
      assert.equal(tool.annotations?.readOnlyHint, false);
      assert.equal(tool.annotations?.destructiveHint, true);
      assert.equal(tool.annotations?.openWorldHint, false);
      for (const skill of ['calendar', 'contacts', 'memory']) assert.match(tool.description ?? '', new RegExp(`skill://${skill}/SKILL\\.md`));
    });

    test('skills through the Skills extension and through plain resources/list + resources/read', async () => {
      const skills = new SkillsClient(mcp.client);
      assert.equal(skills.supported, true);
      const listing = await skills.list();
      assert.deepEqual(listing.skills.map((s) => s.frontmatter.name).sort(), ['calendar', 'contacts', 'memory']);
      const calendar = listing.skills.find((s) => s.frontmatter.name === 'calendar')!;
      const manifest = await skills.read(calendar);
      assert.equal(manifest.text, skillFile('calendar'));
      assert.equal(manifest.verified, true);

      const { resources } = await mcp.client.listResources();
      assert.ok(resources.some((r) => r.uri === 'skill://memory/SKILL.md'));
      const examples = await mcp.client.readResource({ uri: 'skill://calendar/examples.md' });
      assert.equal((examples.contents[0] as { text: string }).text, skillFile('calendar', 'examples.md'));
      await assert.rejects(mcp.client.readResource({ uri: 'skill://calendar/../../package.json' }));
    });

    test('each skill is a prompt too', async () => {
      const { prompts } = await mcp.client.listPrompts();
      assert.deepEqual(prompts.map((p) => p.name).sort(), ['calendar', 'contacts', 'memory']);
      const prompt = await mcp.client.getPrompt({ name: 'memory' });
      assert.equal((prompt.messages[0]!.content as { resource: { text: string } }).resource.text, skillFile('memory'));
    });

    test('tools/call: the projection byte-identical to tool/invoke, structuredContent is its object, the call in history', async () => {
      const created = await call(mcp, { module: 'calendar', method: 'create', input: EVENT });
      assert.notEqual(created.isError, true);
      assert.equal(created.content.length, 1);
      assert.deepEqual(created.structuredContent, JSON.parse(created.content[0]!.text));
      assertWireShape('ToolProjection', created.structuredContent);
      assert.equal(created.structuredContent!.data!.event!.owner_id, user);

      const read = { module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-05-05' } };
      const viaMcp = await call(mcp, read);
      const viaInvoke = await ws.request<{ content: Array<{ text: string }> }>('tool/invoke', {
        session_id: wsSession, thread_id: `compare-${kind}`, tool_call_id: 'c1', args: read,
      });
      assert.equal(viaMcp.content[0]!.text, viaInvoke.content[0]!.text, 'same call, same bytes');

      // The calls land in this user's history, each a tool message whose content is the MCP text.
      const { threads } = await ws.request<{ threads: Array<{ thread_id: string }> }>('thread/list', { session_id: wsSession });
      const expected = kind === 'http' ? `mcp-${mcp.sessionId()}` : kind === 'http-2026' ? 'mcp' : undefined;
      const thread = threads.find((t) => (expected ? t.thread_id === expected : t.thread_id.startsWith('mcp-')));
      assert.ok(thread, `an MCP thread among ${threads.map((t) => t.thread_id).join(', ')}`);
      const history = await ws.request<{ messages: HistoryMessage[] }>('history/get', { session_id: wsSession, thread_id: thread.thread_id, view: 'context' });
      const texts = history.messages.filter((m) => m.role === 'tool').map((m) => m.content);
      assert.ok(texts.includes(created.content[0]!.text));
      assert.ok(texts.includes(viaMcp.content[0]!.text));
    });

    test('a batch sends notifications/progress per item when the client gave a progressToken', async () => {
      const from = mcp.wire.length;
      const result = await call(mcp, { module: 'calendar', method: 'create', input: { items: [EVENT, { ...EVENT, start_at: 'soon' }, EVENT] } }, { onprogress: () => {} });
      assert.equal(result.structuredContent!.status, 'partial');
      const progress = mcp.wire.slice(from).filter((m) => m.method === 'notifications/progress').map((m) => m.params!);
      assert.deepEqual(progress.map((p) => [p.progress, p.total, p.message]), [[1, 3, 'item 0: ok'], [2, 3, 'item 1: failed'], [3, 3, 'item 2: ok']]);
      assert.equal(new Set(progress.map((p) => p.progressToken)).size, 1);
      // Without a progressToken, none.
      const quiet = mcp.wire.length;
      await call(mcp, { module: 'calendar', method: 'create', input: { items: [EVENT] } });
      assert.equal(mcp.wire.slice(quiet).filter((m) => m.method === 'notifications/progress').length, 0);
    });

    test('a failure is isError with the structured error', async () => {
      const bad = await call(mcp, { module: 'calendar', method: 'read', input: { mode: 'day', date: 'soon' } });
      assert.equal(bad.isError, true);
      assert.equal(bad.structuredContent!.error!.code, 'INVALID_ACTION_INPUT');
      assert.deepEqual(bad.structuredContent, JSON.parse(bad.content[0]!.text));
      const unknown = await call(mcp, { module: 'calendar', method: 'teleport', input: {} });
      assert.equal(unknown.isError, true);
      assert.equal(unknown.structuredContent!.error!.code, 'UNKNOWN_ACTION');
    });

    test('a malformed arguments object is an INVALID_ACTION_INPUT tool error, corrected on the second try', async () => {
      const first = await call(mcp, { module: 'memory', method: 'update', input: 'key=x' });
      assert.equal(first.isError, true);
      assert.equal(first.structuredContent!.error!.code, 'INVALID_ACTION_INPUT');
      assert.equal(first.structuredContent!.error!.module, 'memory');
      assert.deepEqual((first.structuredContent!.error!.input_schema as { required: string[] }).required, ['module', 'method', 'input']);
      assert.equal((await call(mcp, { module: 'memory' })).structuredContent!.error!.code, 'INVALID_ACTION_INPUT');
      const second = await call(mcp, { module: 'memory', method: 'update', input: { key: 'x', content: 'fixed' } });
      assert.notEqual(second.isError, true);
      assert.equal(second.structuredContent!.status, 'success');
    });

    test('_meta["toolgate/thread_id"] names the thread; a WebSocket subscriber of it sees the MCP call live', async () => {
      const threadId = `live-${kind}`;
      // stdio is another process on the same database: subscribers are per daemon, so only history is shared.
      if (kind !== 'stdio') await ws.request('thread/subscribe', { session_id: wsSession, thread_id: threadId });
      const before = ws.wire.length;
      const result = await call(mcp, { module: 'memory', method: 'read', input: {} }, { meta: { 'toolgate/thread_id': threadId } });
      const history = await ws.request<{ messages: HistoryMessage[] }>('history/get', { session_id: wsSession, thread_id: threadId, view: 'context' });
      assert.deepEqual(history.messages.map((m) => m.content), [result.content[0]!.text]);
      if (kind !== 'stdio') {
        const seen = ws.wire.slice(before).filter((e) => e.method === 'tool/result');
        assert.equal(seen.length, 1);
        assert.equal((seen[0]!.payload as { thread_id: string; final: boolean }).thread_id, threadId);
      }
    });

    test('_meta["toolgate/tool_call_id"] makes a call idempotent, as on tool/invoke; another tool name is a protocol error', async () => {
      const meta = { 'toolgate/thread_id': `idem-${kind}`, 'toolgate/tool_call_id': 'once' };
      const args = { module: 'memory', method: 'update', input: { key: 'idem', content: 'one' } };
      const first = await call(mcp, args, { meta });
      const again = await call(mcp, args, { meta });
      assert.equal(again.content[0]!.text, first.content[0]!.text);
      const history = await ws.request<{ messages: HistoryMessage[] }>('history/get', { session_id: wsSession, thread_id: `idem-${kind}` });
      assert.equal(history.messages.length, 1);
      const other = await call(mcp, { ...args, input: { key: 'idem', content: 'two' } }, { meta });
      assert.equal(other.structuredContent!.error!.code, 'DUPLICATE_TOOL_CALL_ID');
      await assert.rejects(mcp.client.callTool({ name: 'other_tool', arguments: {} }));
    });

    test('a token pasted into _meta["toolgate/thread_id"] or ["toolgate/tool_call_id"] is refused and stored nowhere', async () => {
      const mark = token.split('.')[2]!;
      for (const meta of [{ 'toolgate/thread_id': `t-${token}` }, { 'toolgate/thread_id': `pasted-${kind}`, 'toolgate/tool_call_id': `auth_${token}` }]) {
        const result = await call(mcp, { module: 'memory', method: 'update', input: { key: 'pasted', content: 'v' } }, { meta });
        assert.equal(result.isError, true);
        assert.match(result.content[0]!.text, /carries a bearer token or credential/);
        assert.ok(!JSON.stringify(result).includes(mark), 'the token is not echoed');
      }
      const { threads } = await ws.request<{ threads: Array<{ thread_id: string }> }>('thread/list', { session_id: wsSession });
      assert.ok(!threads.some((t) => t.thread_id.includes(mark) || t.thread_id === `pasted-${kind}`), 'no thread was made');
      if (!daemon.dbPath.startsWith('postgres')) {
        for (const f of readdirSync(daemon.dataDir).filter((n) => n.startsWith('toolgate.db'))) {
          assert.ok(!readFileSync(join(daemon.dataDir, f)).toString('latin1').includes(mark), `not in ${f}`);
        }
      }
    });

    test('logging carries the session’s own calls, without secrets', async () => {
      // 2025-11-25 sets a level for the session; 2026-07-28 asks per request, in the envelope.
      if (kind !== 'http-2026') await mcp.client.setLoggingLevel('info');
      const from = mcp.wire.length;
      const meta = kind === 'http-2026' ? { 'io.modelcontextprotocol/logLevel': 'info' } : undefined;
      const result = await call(mcp, { module: 'memory', method: 'read', input: {} }, meta ? { meta } : {});
      assert.notEqual(result.isError, true);
      const messages = mcp.wire.slice(from).filter((m) => m.method === 'notifications/message').map((m) => m.params!.data);
      const own = messages.filter((m) => (m as { action?: string }).action === 'memory.read');
      assert.ok(own.length >= 1, `a log message for the call (got ${JSON.stringify(messages)})`);
      assert.ok(!JSON.stringify(messages).includes(token.split('.')[2]!));
    });
  });
}
