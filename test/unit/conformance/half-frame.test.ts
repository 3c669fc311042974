/**
 * The conformance runner's stdio transport, like the client, leaves nothing behind when the daemon under
 * test dies in the middle of a frame: vscode-jsonrpc's reader re-arms a referenced 10 s timer while a
 * message is half read and its own dispose leaves it armed (src/protocol/stream-reader.ts) — a runner
 * used as a library (a test file, a host's CI step) could never exit on its own after that.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stdioTransport } from '../../../src/conformance/transport.js';
import { waitFor } from '../../helpers/wait-for.js';

test('a daemon that exits mid-frame leaves no timer in the runner once the transport is closed', async () => {
  const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const half = 'process.stdout.write("Content-Length: 200\\r\\n\\r\\n{\\"jsonrpc\\":\\"2.0\\"")';
  const transport = stdioTransport([process.execPath, '-e', half]);
  let reason: string | undefined;
  transport.onClose((r) => (reason = r));
  transport.onMessage(() => assert.fail('half a frame is no message'));
  await waitFor(() => reason !== undefined, 'the transport to report the exit');
  assert.match(reason!, /daemon exited 0/);
  await transport.close();
  await waitFor(
    () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length <= before,
    () => `no timer left behind (active: ${process.getActiveResourcesInfo().join(', ')})`,
    2_000,
  );
});
