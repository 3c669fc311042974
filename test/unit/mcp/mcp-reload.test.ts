/**
 * A configuration reload (SIGHUP, contract section 20) reaches a `serve --mcp`
 * server already connected, in process over in-memory streams: once the
 * profile drops a skill and its actions, the server lists and serves neither
 * the skill's resources nor its prompt, its tool's description and hints say
 * the new lists, and each list that changed is announced
 * (`notifications/{tools,prompts,resources}/list_changed`, which its
 * capabilities declare). Widened again, the skill is back. Calls follow the
 * reload as they always did (the session's allowed actions are live).
 * Over HTTP, a 2025-11-25 session's server follows alike, and a 2026-07-28
 * request's server is built from the session as it is then.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { createDaemon, liveLimits, limitsOf, type ServeOptions } from '../../../src/app/serve.js';
import { reloadConfig } from '../../../src/app/config-reload.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { openMcpStdioPrincipal } from '../../../src/mcp/mcp-session.js';
import { serveMcpStdio } from '../../../src/mcp/mcp-stdio.js';
import { serveContext } from '../../../src/rpc/serve-context.js';
import { tempDir } from '../../helpers/repo.js';
import { waitFor } from '../../helpers/wait-for.js';
import { mintBearer, TEST_BEARER_SECRET } from '../../helpers/tokens.js';
import { startInProcess } from '../../helpers/in-process.js';
import { connectMcp } from '../../helpers/mcp-hosts.js';

const profile = (skills: string[], actions: string[]) => JSON.stringify({ agents: { default: { enabled_skills: skills, allowed_actions: actions } } });

test('in process: a SIGHUP that drops a skill takes it from a connected serve --mcp server (resources, prompts, tool), announced; widened, it is back', async () => {
  const dir = tempDir();
  const file = join(dir, 'toolgate.json');
  writeFileSync(file, profile(['calendar', 'contacts', 'memory'], ['calendar.*', 'contacts.*', 'memory.*']));
  const env = { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_MCP_TOKEN: await mintBearer('mia', {}, { expiresIn: '10m' }) };
  const opts: ServeOptions = { transport: 'mcp', db: join(dir, 'toolgate.db'), dev: false, executor: 'inprocess', env, config: file };
  const log = createLogger(() => {});
  const services = await createDaemon(opts, log);
  const reload = () => assert.equal(reloadConfig({ services, log, file, liveLimitsOf: (config) => liveLimits(limitsOf(opts, config)) }), 'ok');
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const handle = await serveMcpStdio(serveContext(services, { limits: { maxInFlight: 8 } }), { principal: await openMcpStdioPrincipal(services, env), stdin: toServer, stdout: fromServer });
  const announced: string[] = [];
  const client = new Client({ name: 'in-process', version: '1' });
  for (const kind of ['tools', 'prompts', 'resources'] as const) {
    client.setNotificationHandler(`notifications/${kind}/list_changed`, () => void announced.push(kind));
  }
  await client.connect(new StdioServerTransport(fromServer, toServer));
  const contacts = 'skill://contacts/SKILL.md';
  const shows = async () => {
    const [tools, prompts, resources] = await Promise.all([client.listTools(), client.listPrompts(), client.listResources()]);
    return {
      description: tools.tools[0]!.description!,
      destructive: tools.tools[0]!.annotations?.destructiveHint,
      prompts: prompts.prompts.map((p) => p.name).sort(),
      listed: resources.resources.some((r) => r.uri === contacts),
    };
  };
  try {
    const caps = client.getServerCapabilities();
    assert.deepEqual([caps?.tools?.listChanged, caps?.prompts?.listChanged, caps?.resources?.listChanged], [true, true, true]);
    const before = await shows();
    assert.deepEqual(before.prompts, ['calendar', 'contacts', 'memory']);
    assert.ok(before.listed && before.description.includes(contacts), JSON.stringify(before));
    assert.match(JSON.stringify(await client.readResource({ uri: contacts })), /contacts/);

    // The profile drops contacts (and its actions): every list of the connected server follows.
    writeFileSync(file, profile(['calendar', 'memory'], ['calendar.read', 'memory.read']));
    reload();
    await waitFor(() => ['tools', 'prompts', 'resources'].every((k) => announced.includes(k)), () => `list_changed of each list; got ${JSON.stringify(announced)}`);
    const after = await shows();
    assert.deepEqual(after.prompts, ['calendar', 'memory']);
    assert.equal(after.listed, false, 'the dropped skill is still listed');
    assert.ok(!after.description.includes('contacts'), after.description);
    assert.equal(after.destructive, false, 'the tool still says a destructive action is allowed');
    await assert.rejects(client.readResource({ uri: contacts }), 'the dropped skill is still readable');
    await assert.rejects(client.getPrompt({ name: 'contacts' }), 'the dropped skill\'s prompt still answers');
    const refused = (await client.callTool({ name: 'project_cli', arguments: { module: 'contacts', method: 'read', input: {} } })) as { structuredContent: { error: { code: string } } };
    assert.equal(refused.structuredContent.error.code, 'ACTION_NOT_ALLOWED');

    // A reload that changes nothing this session shows announces nothing.
    announced.length = 0;
    reload();
    assert.deepEqual((await shows()).prompts, ['calendar', 'memory']);
    assert.equal(announced.length, 0, JSON.stringify(announced));

    // Widened again: contacts is back, readable and announced.
    writeFileSync(file, profile(['calendar', 'contacts', 'memory'], ['calendar.*', 'contacts.*', 'memory.*']));
    reload();
    await waitFor(() => announced.includes('resources') && announced.includes('prompts'), () => `list_changed again; got ${JSON.stringify(announced)}`);
    assert.deepEqual(await shows(), before);
    assert.match(JSON.stringify(await client.getPrompt({ name: 'contacts' })), /skill:\/\/contacts\/SKILL\.md/);
  } finally {
    await client.close();
    await handle.close();
    await services.store.close();
  }
});

for (const kind of ['http', 'http-2026'] as const) {
  test(`in process, MCP over HTTP (${kind}): after a SIGHUP that drops a skill, a connected client neither lists nor reads it`, async () => {
    const file = join(tempDir(), 'toolgate.json');
    writeFileSync(file, profile(['calendar', 'contacts', 'memory'], ['calendar.*', 'contacts.*', 'memory.*']));
    const host = await startInProcess({ transport: 'ws', args: ['--config', file] });
    const mcp = await connectMcp(kind, { token: await mintBearer('mia'), port: host.port! });
    const contacts = 'skill://contacts/SKILL.md';
    try {
      const listed = async () => (await mcp.client.listResources()).resources.some((r) => r.uri === contacts);
      const prompts = async () => (await mcp.client.listPrompts()).prompts.map((p) => p.name).sort();
      assert.equal(await listed(), true);
      assert.deepEqual(await prompts(), ['calendar', 'contacts', 'memory']);

      writeFileSync(file, profile(['calendar', 'memory'], ['calendar.*', 'memory.*']));
      const reloaded = reloadConfig({ services: host.services, log: host.services.log, file, liveLimitsOf: (config) => liveLimits(limitsOf({ transport: 'ws', dev: false, executor: 'inprocess', env: {} }, config)) });
      assert.equal(reloaded, 'ok');
      // The catalog's reload reads the skills folder again: listed no more once it has.
      await waitFor(async () => !(await listed()), 'the dropped skill to leave resources/list');
      assert.deepEqual(await prompts(), ['calendar', 'memory']);
      await assert.rejects(mcp.client.readResource({ uri: contacts }), 'the dropped skill is still readable');
      assert.ok(!(await mcp.client.listTools()).tools[0]!.description!.includes('contacts'));
    } finally {
      await mcp.close();
      await host.stop();
    }
  });
}
