/** Entry (a): the bare vscode-jsonrpc echo server. */
import { join } from 'node:path';
import { BENCH_DIST } from '../env.js';
import { calendarInput } from '../anchors/calendar-input.js';
import { spawnStdioPeer, type StdioPeer } from '../stdio-peer.js';
import type { Target } from '../target.js';

export const ECHO_SERVER = join(BENCH_DIST, 'anchors', 'echo-server.js');

export async function startEcho(): Promise<Target & { peer: StdioPeer }> {
  const peer = spawnStdioPeer([ECHO_SERVER]);
  await peer.rpc.sendRequest('tool/invoke', {}); // started
  return {
    name: 'vscode-jsonrpc echo',
    pid: peer.proc.pid!,
    peer,
    async call(i) {
      await peer.rpc.sendRequest('tool/invoke', {
        session_id: 'bench', thread_id: 'bench', tool_call_id: `c${i}`,
        args: { module: 'calendar', method: 'create', input: calendarInput(i) },
      });
    },
    stop: () => peer.stop(),
  };
}
