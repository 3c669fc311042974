/**
 * The smallest toolgate host: start the daemon over stdio, open a session,
 * make the model's one tool call, show what the model and the front end get,
 * read the history back, and stop.
 *
 *   TOOLGATE_TOKEN=$(node bin/toolgate.mjs dev-token --user alice) node dist/examples/stdio-host/main.js --dev
 *
 * (`--dev`: the daemon verifies the token with the data folder's dev secret,
 * which `dev-token` created; `--db FILE` picks another database.) A failure is
 * one line on stderr — when the daemon refuses to start, its own line.
 *
 * In your own project: `import { ToolgateClient } from 'toolgate/client'`.
 */
import { parseArgs } from 'node:util';
import { ToolgateClient } from '../../src/client/index.js';

const { values } = parseArgs({ options: { db: { type: 'string' }, dev: { type: 'boolean' } } });
const token = process.env.TOOLGATE_TOKEN;
if (!token) {
  console.error('stdio-host: set TOOLGATE_TOKEN to a bearer token (toolgate dev-token --user alice)');
  process.exit(2);
}

// `toolgate serve --stdio`, as a child process speaking LSP-framed JSON-RPC.
const client = ToolgateClient.spawn({ args: [...(values.db ? ['--db', values.db] : []), ...(values.dev ? ['--dev'] : [])], token });
try {
  await run();
} catch (err) {
  // A daemon that refused to start says why in its last stderr line: DaemonExitedError's message carries it.
  console.error(`stdio-host: ${(err as Error).message}`);
  await client.close();
  process.exitCode = 1;
}

async function run(): Promise<void> {
  client.onToolResult((n) => console.log(`tool/result ${n.tool_call_id} ${n.status} final=${n.final} ui=${n.ui_schema?.component.type ?? 'none'}`));

  const init = await client.initialize({ client_info: { name: 'stdio-host-example', version: '1.0.0' } });
  console.log(`tool for the model: ${init.tool.name}`);
  const session = await client.openSession();
  console.log(`session for ${session.info.user_id}: ${session.info.allowed_actions.length} actions allowed`);

  // What the model wrote: only `args`. The host adds the session, the thread and the call id.
  const args = { module: 'memory', method: 'update', input: { key: 'seat', content: 'prefers window seats' } };
  const response = await session.invoke('example-thread', `call-${Date.now()}`, args);
  console.log(`text for the model: ${response.content[0]!.text}`);

  const history = await session.history('example-thread', { view: 'context' });
  console.log(`history: ${history.messages.length} message(s); the last is byte for byte that text: ${history.messages.at(-1)?.content === response.content[0]!.text}`);

  process.exitCode = (await client.stop()) ?? 1; // shutdown, exit, and the daemon's exit code
}
