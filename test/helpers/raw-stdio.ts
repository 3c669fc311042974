/**
 * A daemon on stdio spoken to in raw bytes: tests of the LSP framing write
 * whatever they like (broken headers, huge bodies, batches) and read back
 * the answers through vscode-jsonrpc's own reader. `startRaw` spawns the
 * binary; `startRawInProcess` serves the same stdio transport in this
 * process over an in-memory pair (test/helpers/in-process.ts), where a
 * connection's end code is the exit code the binary would have.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { StreamMessageReader, type Message } from 'vscode-jsonrpc/node';
import { TOOLGATE_BIN, tempDir } from './repo.js';
import { TEST_BEARER_SECRET } from './tokens.js';
import { startInProcess } from './in-process.js';

export interface RawDaemon {
  proc: ChildProcessWithoutNullStreams;
  dataDir: string;
  messages: Array<Message & { id?: unknown; error?: { code: number; message: string }; result?: unknown }>;
  stderr(): string;
  send(raw: string | Buffer): void;
  frame(body: unknown): void;
  /** Waits until `pred` holds for some message (or the daemon exits); returns it. */
  waitFor(pred: (m: RawDaemon['messages'][number]) => boolean, ms?: number): Promise<RawDaemon['messages'][number] | undefined>;
  exited: Promise<number | null>;
  kill(): void;
}

export function frameOf(body: unknown): Buffer {
  const text = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${text.length}\r\n\r\n`, 'ascii'), text]);
}

export function startRaw(args: string[] = [], env: Record<string, string> = {}): RawDaemon {
  const dataDir = tempDir('toolgate-raw-');
  const proc = spawn(process.execPath, [TOOLGATE_BIN, 'serve', '--stdio', '--db', join(dataDir, 'toolgate.db'), ...args], {
    env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: dataDir, TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  proc.stdin.on('error', () => {});
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return rawOver(proc, dataDir, () => stderr, exited, () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  });
}

/**
 * The daemon in this process, one stdio connection to it (`openStdio`): `proc` is that connection's pair of
 * streams, with the exit code the binary would have once it ends. Not for what only a process has (its pid,
 * its memory, signals).
 */
export async function startRawInProcess(args: string[] = [], env: Record<string, string> = {}): Promise<RawDaemon> {
  const dataDir = tempDir('toolgate-raw-');
  const host = await startInProcess({ transport: 'stdio', executor: 'subprocess', dataDir, args, env });
  const { toDaemon, fromDaemon, finished } = host.openStdio();
  const proc = { stdin: toDaemon, stdout: fromDaemon, exitCode: null as number | null, signalCode: null, pid: undefined };
  const exited = finished.then(async (code) => {
    proc.exitCode = code;
    await host.stop();
    return code;
  });
  // Stopping the daemon ends the connection too (as SIGKILL would the process); stop() runs once.
  return rawOver(proc as unknown as ChildProcessWithoutNullStreams, dataDir, () => host.stderr(), exited, () => host.stop());
}

function rawOver(proc: ChildProcessWithoutNullStreams, dataDir: string, stderr: () => string, exited: Promise<number | null>, kill: () => unknown): RawDaemon {
  const messages: RawDaemon['messages'] = [];
  const waiters = new Set<() => void>();
  const reader = new StreamMessageReader(proc.stdout);
  reader.listen((m) => {
    messages.push(m as RawDaemon['messages'][number]);
    for (const w of waiters) w();
  });
  void exited.then(() => setTimeout(() => { for (const w of waiters) w(); }, 50));
  const d: RawDaemon = {
    proc,
    dataDir,
    messages,
    stderr,
    send: (raw) => void proc.stdin.write(raw),
    frame: (body) => void proc.stdin.write(frameOf(body)),
    exited,
    kill: () => void kill(),
    waitFor(pred, ms = 15_000) {
      return new Promise((resolve) => {
        const check = () => {
          const found = messages.find(pred);
          if (found || proc.exitCode !== null || proc.signalCode !== null) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          resolve(undefined);
        }, ms);
        waiters.add(check);
        check();
      });
    },
  };
  return d;
}
