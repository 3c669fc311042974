/**
 * An MCP host that declared no elicitation calls an action its profile asks before (approval.md): the
 * `tools/call` waits, nothing runs, until the same user decides on another surface — here `call/approve` or
 * `call/deny` on a JSON-RPC WebSocket connection that learned the call from `thread/subscribe` +
 * `tool/approval` — and then answers with the outcome. Over stdio (`serve --mcp`, another process on the same
 * database) and Streamable HTTP, both revisions, from outside.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connectMcp, type McpHost } from '../helpers/mcp-hosts.js';
import { openSession, startHost, type Client, type Host } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait-for.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/repo.js';
import type { CallCancelResult, CallGetResult, MemoryForgetData, ToolApprovalNotification, ToolError, ToolResponse } from '../../src/protocol/index.js';

interface CallResult {
  content: ToolResponse['content'];
  /** The projection; a denial's error carries the approver's `reason`. */
  structuredContent?: { status: string; data?: Partial<MemoryForgetData>; error?: ToolError & { reason?: string } };
  isError?: boolean;
}

/** A config whose default profile (the one MCP sessions use) asks before memory.forget. */
function askConfig(): string {
  const file = join(tempDir(), 'toolgate.config.json');
  writeFileSync(file, JSON.stringify({ agents: { default: { enabled_skills: ['memory'], allowed_actions: ['memory.*'], approval: { ask: ['memory.forget'] } } } }));
  return file;
}

function approvalOf(client: Client, toolCallId: string): Promise<ToolApprovalNotification> {
  return waitFor(
    () => client.wire.find((e) => e.method === 'tool/approval' && (e.payload as ToolApprovalNotification).tool_call_id === toolCallId)?.payload as ToolApprovalNotification | undefined,
    `tool/approval of ${toolCallId}`,
  );
}

for (const kind of ['stdio', 'http', 'http-2026'] as const) {
  describe(`MCP over ${kind} without elicitation: an ask call waits for a decision made on JSON-RPC`, () => {
    let daemon: Host;
    let rpc: Client;
    let session: string;
    let mcp: McpHost;
    const thread = `mcp-ask-${kind}`;

    before(async () => {
      const config = askConfig();
      daemon = await startHost({ transport: 'ws', args: ['--executor', 'inprocess', '--config', config] });
      const token = await mintBearer('mcp-asker');
      rpc = await daemon.connect();
      session = (await openSession(rpc, token)).session_id;
      await rpc.request('thread/subscribe', { session_id: session, thread_id: thread });
      // stdio: `serve --mcp` in a process of its own on the same database; the decision is made in the other.
      mcp = await connectMcp(kind, { token, port: daemon.port!, dbPath: daemon.dbPath, args: ['--config', config] });
    });
    after(async () => {
      await mcp?.close();
      await daemon?.stop();
    });

    const remember = async (key: string, content: string) => {
      const r = await rpc.request<ToolResponse>('tool/invoke', {
        session_id: session,
        thread_id: thread,
        tool_call_id: `save-${key}`,
        args: { module: 'memory', method: 'update', input: { key, content } },
      });
      assert.equal(r.status, 'success', r.content[0]!.text);
    };
    const recall = async (key: string, id: string): Promise<string | undefined> => {
      const r = await rpc.request<ToolResponse>('tool/invoke', { session_id: session, thread_id: thread, tool_call_id: id, args: { module: 'memory', method: 'read', input: { key } } });
      const items = (JSON.parse(r.content[0]!.text) as { data: { items: Array<{ key: string; content: string }> } }).data.items;
      return items.find((m) => m.key === key)?.content;
    };

    /** Starts the MCP tools/call of memory.forget; resolves once the approver saw its tool/approval and that nothing ran. */
    async function ask(key: string, toolCallId: string) {
      let answered = false;
      const pending = (
        mcp.client.callTool({
          name: 'project_cli',
          arguments: { module: 'memory', method: 'forget', input: { key } },
          _meta: { 'toolgate/thread_id': thread, 'toolgate/tool_call_id': toolCallId },
        }) as Promise<CallResult>
      ).finally(() => (answered = true));
      const getCall = () => rpc.request<CallGetResult>('call/get', { session_id: session, thread_id: thread, tool_call_id: toolCallId });
      // stdio: asked in another process on SQLite, whose tool/approval reaches only its own subscribers; the
      // approver finds the call with call/get (the stored state every process reads).
      const approval =
        kind === 'stdio'
          ? await waitFor(async () => {
              const got = await getCall().catch(() => undefined);
              return got?.state === 'awaiting_approval' ? { action: got.action, args_sha256: got.args_sha256 } : undefined;
            }, `call/get of ${toolCallId} awaiting approval`)
          : await approvalOf(rpc, toolCallId);
      assert.equal(approval.action, 'memory.forget');
      const got = await getCall();
      assert.equal(got.state, 'awaiting_approval');
      assert.equal(got.args_sha256, approval.args_sha256);
      assert.equal(await recall(key, `${toolCallId}-read-before`), 'keep me', 'nothing runs before the decision');
      assert.equal(answered, false, 'the MCP tools/call answered before any decision');
      return { approval, pending, key: { session_id: session, thread_id: thread, tool_call_id: toolCallId, args_sha256: approval.args_sha256 } };
    }

    test('call/approve on JSON-RPC runs it once; the waiting tools/call answers with the outcome', async () => {
      await remember('approve-me', 'keep me');
      const { pending, key } = await ask('approve-me', 'mcp-approve-1');
      const decided = await rpc.request<CallCancelResult>('call/approve', key);
      assert.equal(decided.state, 'done');
      const result = await pending;
      assert.notEqual(result.isError, true, result.content[0]?.type === 'text' ? result.content[0].text : '');
      assert.deepEqual([result.structuredContent?.status, result.structuredContent?.data?.forgotten], ['success', true]);
      const text = result.content[0]?.type === 'text' ? result.content[0].text : undefined;
      assert.equal(text, decided.outcome?.content[0]?.text, 'the MCP text is the stored outcome');
      assert.equal(await recall('approve-me', 'read-after-approve'), undefined);
    });

    test('call/deny on JSON-RPC: the waiting tools/call answers the correctable APPROVAL_DENIED, nothing written', async () => {
      await remember('deny-me', 'keep me');
      const { pending, key } = await ask('deny-me', 'mcp-deny-1');
      const decided = await rpc.request<CallCancelResult>('call/deny', { ...key, reason: 'keep that one' });
      assert.equal(decided.state, 'done');
      const result = await pending;
      assert.equal(result.isError, true);
      assert.deepEqual([result.structuredContent?.status, result.structuredContent?.error?.code, result.structuredContent?.error?.reason], ['failure', 'APPROVAL_DENIED', 'keep that one']);
      assert.equal(await recall('deny-me', 'read-after-deny'), 'keep me');
    });
  });
}
