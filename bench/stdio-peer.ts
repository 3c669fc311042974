/**
 * A child process spoken to with vscode-jsonrpc over its stdin/stdout (LSP
 * framing): the echo anchor and toolgate `serve --stdio` alike.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import { childEnv } from './env.js';

export interface StdioPeer {
  proc: ChildProcessWithoutNullStreams;
  rpc: MessageConnection;
  stderr(): string;
  /** Ends the child: `exit` after an optional `shutdown`, then a kill if it lingers. */
  stop(opts?: { shutdown?: boolean }): Promise<void>;
}

export function spawnStdioPeer(args: string[], env: Record<string, string> = {}, cwd?: string): StdioPeer {
  const proc = spawn(process.execPath, args, { env: childEnv(env), stdio: ['pipe', 'pipe', 'pipe'], cwd });
  let err = '';
  proc.stderr.on('data', (c: Buffer) => {
    if (err.length < 256 * 1024) err += c.toString('utf8');
  });
  const rpc = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
  rpc.onError(() => {});
  rpc.listen();
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  return {
    proc,
    rpc,
    stderr: () => err,
    async stop(opts = {}) {
      if (proc.exitCode === null) {
        try {
          if (opts.shutdown) await rpc.sendRequest('shutdown');
          await rpc.sendNotification('exit');
        } catch {
          /* already gone */
        }
        const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rpc.dispose();
    },
  };
}
