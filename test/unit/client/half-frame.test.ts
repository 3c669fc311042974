/**
 * A daemon that dies in the middle of a frame leaves the client nothing behind: vscode-jsonrpc's reader
 * re-arms a referenced 10 s timer for as long as a message is half read, and its own dispose leaves it
 * armed (src/protocol/stream-reader.ts) — a host process could never exit on its own after that.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ToolgateClient } from '../../../src/client/index.js';
import { waitFor } from '../../helpers/wait-for.js';

test('a daemon that exits mid-frame leaves no timer in the host once the connection is gone', async () => {
  const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  // "serve --stdio" is ignored by -e: the child writes half of a frame and exits.
  const half = 'process.stdout.write("Content-Length: 200\\r\\n\\r\\n{\\"jsonrpc\\":\\"2.0\\"")';
  const client = ToolgateClient.spawn({ command: [process.execPath, '-e', half] });
  let closed = false;
  client.onClose(() => (closed = true));
  assert.notEqual(await client.exited, undefined);
  await waitFor(() => closed, 'the connection to close once the daemon is gone');
  await waitFor(
    () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length <= before,
    () => `no timer left behind (active: ${process.getActiveResourcesInfo().join(', ')})`,
    2_000,
  );
});
