/**
 * A small typed client of the toolgate protocol, for TypeScript hosts
 * (`import { ToolgateClient } from 'toolgate/client'`).
 *
 * It is vscode-jsonrpc's MessageConnection with the protocol's own method
 * declarations (`src/protocol/methods.ts`: one RequestType/NotificationType
 * per method, the same objects the daemon dispatches by), so params and
 * results are typed and a method name cannot be misspelt. It connects over
 * stdio (it spawns `toolgate serve --stdio`, or takes streams you already
 * have) or over WebSocket (`/rpc`). It imports nothing of the daemon: what a
 * host sees is only the public protocol.
 *
 * Errors are vscode-jsonrpc's `ResponseError` (`code`, `message`, `data`), as
 * the daemon sent them; a tool-level failure is not an error but a result
 * with `status: "failure"`. When a daemon this client spawned exits under a
 * request, the request fails with `DaemonExitedError` instead, whose message
 * is the daemon's exit code and the last line it wrote on stderr (what to
 * fix, such as a missing bearer secret).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Readable, Writable } from 'node:stream';
import WebSocket from 'ws';
import {
  ConnectionError,
  ErrorCodes,
  ResponseError,
  StreamMessageWriter,
  type CancellationToken,
  type Disposable,
  type MessageConnection,
  type MessageReader,
  type MessageWriter,
} from 'vscode-jsonrpc/node';
import * as P from '../protocol/methods.js';
import type { ToolCallArgs, ToolResponse, ToolResultNotification } from '../protocol/tool.js';
import { tapReader, tapWriter, type MessageTap } from './tap.js';
import { ClientWebSocketReader, ClientWebSocketWriter } from './ws-stream.js';
import { DrainingStreamMessageReader } from '../protocol/stream-reader.js';
import { connectClosingAfterDispatch } from '../protocol/close-after-dispatch.js';

export interface ClientOptions {
  /** Sees every message sent and received, in wire order (a protocol log, a transcript). */
  tap?: MessageTap;
  /** The bearer token `openSession()` uses when it is given none. */
  token?: string;
}

export interface SpawnOptions extends ClientOptions {
  /**
   * The program and its leading arguments; `serve --stdio` and `args` follow.
   * Default: this package's own `bin/toolgate.mjs` under the running Node.
   */
  command?: readonly string[];
  /** More `serve` flags: `['--db', file, '--dev']`. */
  args?: readonly string[];
  /** The daemon's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export type InitializeOptions = Partial<P.InitializeParams>;

/** The package root (where package.json and bin/ are), found from this file. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('toolgate/client: package root not found');
    dir = parent;
  }
  return dir;
}

/** `node …/bin/toolgate.mjs`: the command `ToolgateClient.spawn` runs by default. */
export function defaultToolgateCommand(): string[] {
  return [process.execPath, join(packageRoot(), 'bin', 'toolgate.mjs')];
}

/**
 * A request failed because the daemon this client spawned exited: `exitCode`
 * and the last line of its stderr (`lastStderrLine`, empty when it wrote
 * none) say why. The message is `daemon exited N: <that line>`.
 */
export class DaemonExitedError extends Error {
  override name = 'DaemonExitedError';
  constructor(
    readonly exitCode: number | null,
    readonly lastStderrLine: string,
  ) {
    super(`daemon exited ${exitCode ?? '?'}${lastStderrLine ? `: ${lastStderrLine}` : ''}`);
  }
}

/** How long a request that lost its connection waits for the daemon's exit code before failing as it was. */
const EXIT_REPORT_WAIT_MS = 2_000;

/** The errors vscode-jsonrpc gives pending and later requests once the connection has gone. */
function lostConnection(err: unknown): boolean {
  if (err instanceof ConnectionError) return true;
  return err instanceof ResponseError && (err.code === ErrorCodes.PendingResponseRejected || err.code === ErrorCodes.MessageWriteError || err.code === ErrorCodes.ConnectionInactive);
}

export class ToolgateClient {
  /** The underlying vscode-jsonrpc connection, for what the typed methods do not cover. */
  readonly connection: MessageConnection;
  /** The daemon process, when this client spawned it. */
  readonly process: ChildProcessWithoutNullStreams | undefined;
  /** Resolves with the daemon's exit code (a signal gives 128) when this client spawned it; else never. */
  readonly exited: Promise<number | null>;
  private readonly token: string | undefined;
  private readonly closer: () => Promise<void>;
  /** The reader's close, reported once every message it read is dispatched. */
  private readonly readerClosed: Promise<void>;
  private stderrText = '';
  private closed = false;
  /** `connection.sendRequest`, with a spawned daemon's exit explained (`explained`). */
  private readonly send: MessageConnection['sendRequest'];

  private constructor(reader: MessageReader, writer: MessageWriter, opts: ClientOptions, closer: () => Promise<void>, proc?: ChildProcessWithoutNullStreams) {
    const r = opts.tap ? tapReader(reader, opts.tap) : reader;
    const w = opts.tap ? tapWriter(writer, opts.tap) : writer;
    // The reader's close comes after the daemon's last answers and notifications (close-after-dispatch.ts).
    const { connection, readerClosed } = connectClosingAfterDispatch(r, w);
    this.connection = connection;
    this.readerClosed = readerClosed;
    this.send = ((...args: unknown[]) => this.explained(() => (this.connection.sendRequest as (...a: unknown[]) => Promise<unknown>)(...args))) as MessageConnection['sendRequest'];
    this.connection.onError(() => {}); // a broken peer shows up as failed requests and onClose
    this.token = opts.token;
    this.closer = closer;
    this.process = proc;
    this.exited = proc
      ? new Promise((resolve) => proc.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))))
      : new Promise(() => {});
    if (proc) {
      proc.stderr.on('data', (c: Buffer) => {
        // Kept for error reports: the daemon logs JSON lines on stderr.
        this.stderrText = (this.stderrText + c.toString('utf8')).slice(-256 * 1024);
      });
      proc.stdin.on('error', () => {}); // a dead child shows up through `exited`
      // Once the daemon is gone and every message it wrote is dispatched, pending requests fail instead of hanging.
      proc.once('close', () => void this.readerClosed.then(() => this.connection.dispose()));
    }
  }

  // ───────────────────────────── connecting ─────────────────────────────

  /** Starts `toolgate serve --stdio …` as a child process and speaks LSP-framed JSON-RPC to it. */
  static spawn(opts: SpawnOptions = {}): ToolgateClient {
    const [program, ...lead] = opts.command ?? defaultToolgateCommand();
    if (!program) throw new Error('toolgate/client: empty command');
    const proc = spawn(program, [...lead, 'serve', '--stdio', ...(opts.args ?? [])], {
      env: opts.env ?? process.env,
      cwd: opts.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: false,
    });
    const client: ToolgateClient = new ToolgateClient(
      new DrainingStreamMessageReader(proc.stdout),
      new StreamMessageWriter(proc.stdin),
      opts,
      () => stopChild(proc, client.exited),
      proc,
    );
    client.connection.listen();
    return client;
  }

  /** Speaks LSP-framed JSON-RPC over streams you already have (a daemon you started, an in-memory pair). */
  static fromStreams(readable: Readable, writable: Writable, opts: ClientOptions = {}): ToolgateClient {
    const client = new ToolgateClient(new DrainingStreamMessageReader(readable), new StreamMessageWriter(writable), opts, async () => {});
    client.connection.listen();
    return client;
  }

  /** Connects to `serve --ws` at `url` (e.g. `ws://127.0.0.1:8787/rpc`); one JSON-RPC message per text frame. */
  static async connect(url: string, opts: ClientOptions & { headers?: Record<string, string> } = {}): Promise<ToolgateClient> {
    const socket = new WebSocket(url, { headers: opts.headers });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.once('unexpected-response', (_req, res) => reject(new Error(`toolgate/client: ${url} answered HTTP ${res.statusCode}`)));
    });
    const client = new ToolgateClient(new ClientWebSocketReader(socket), new ClientWebSocketWriter(socket), opts, async () => {
      if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) {
        const gone = new Promise((r) => socket.once('close', r));
        socket.close();
        await gone;
      }
    });
    // Once the socket is gone and every message it carried is dispatched, pending requests fail.
    socket.once('close', () => void client.readerClosed.then(() => client.connection.dispose()));
    client.connection.listen();
    return client;
  }

  // ───────────────────────────── the methods ─────────────────────────────

  /** `initialize`; `protocol_version` defaults to the one this client speaks. */
  initialize(params: InitializeOptions = {}): Promise<P.InitializeResult> {
    return this.send(P.InitializeRequest, { protocol_version: P.PROTOCOL_VERSION, ...params });
  }

  /**
   * `session/open`. With a token (or the client's default token) it opens a
   * bearer session; pass full params for an automation session or a profile.
   */
  async openSession(params: P.SessionOpenParams | { token?: string; agent?: string; enabled_skills?: string[] } = {}): Promise<Session> {
    const full: P.SessionOpenParams =
      'auth' in params
        ? params
        : {
            auth: { type: 'bearer', token: params.token ?? this.token ?? missingToken() },
            ...(params.agent === undefined ? {} : { agent: params.agent }),
            ...(params.enabled_skills === undefined ? {} : { enabled_skills: params.enabled_skills }),
          };
    return new Session(this, await this.send(P.SessionOpenRequest, full));
  }

  invoke(params: P.ToolInvokeParams, token?: CancellationToken): Promise<ToolResponse> {
    return this.send(P.ToolInvokeRequest, params, token);
  }

  appendMessage(params: P.MessageAppendParams): Promise<P.MessageAppendResult> {
    return this.send(P.MessageAppendRequest, params);
  }

  getHistory(params: P.HistoryGetParams): Promise<P.HistoryGetResult> {
    return this.send(P.HistoryGetRequest, params);
  }

  listThreads(params: P.ThreadListParams): Promise<P.ThreadListResult> {
    return this.send(P.ThreadListRequest, params);
  }

  getCall(params: P.CallGetParams): Promise<P.CallGetResult> {
    return this.send(P.CallGetRequest, params);
  }

  cancelCall(params: P.CallCancelParams): Promise<P.CallCancelResult> {
    return this.send(P.CallCancelRequest, params);
  }

  /** `call/approve`: runs the call awaiting approval whose args have this digest, once. */
  approveCall(params: P.CallApproveParams): Promise<P.CallCancelResult> {
    return this.send(P.CallApproveRequest, params);
  }

  /** `call/deny`: ends the call awaiting approval whose args have this digest as APPROVAL_DENIED. */
  denyCall(params: P.CallDenyParams): Promise<P.CallCancelResult> {
    return this.send(P.CallDenyRequest, params);
  }

  subscribe(params: P.ThreadSubscribeParams): Promise<P.ThreadSubscribeResult> {
    return this.send(P.ThreadSubscribeRequest, params);
  }

  unsubscribe(params: P.ThreadSubscribeParams): Promise<P.ThreadSubscribeResult> {
    return this.send(P.ThreadUnsubscribeRequest, params);
  }

  listSkills(params: P.SkillsListParams): Promise<P.SkillsListResult> {
    return this.send(P.SkillsListRequest, params);
  }

  readSkill(params: P.SkillsReadParams): Promise<P.SkillsReadResult> {
    return this.send(P.SkillsReadRequest, params);
  }

  /** LSP's `shutdown`: the daemon finishes what it is doing; later requests on this connection fail. */
  async shutdown(): Promise<void> {
    await this.send(P.ShutdownRequest);
  }

  /** LSP's `exit` notification: on stdio the daemon exits (0 after `shutdown`), on WebSocket the connection closes. */
  exit(): Promise<void> {
    return this.connection.sendNotification(P.ExitNotification);
  }

  /** Any request by name, untyped: for methods this client does not know (or tests of bad input). */
  request<R = unknown>(method: string, params?: unknown, token?: CancellationToken): Promise<R> {
    if (params === undefined) return token ? this.send<R>(method, token) : this.send<R>(method);
    return token ? this.send<R>(method, params, token) : this.send<R>(method, params);
  }

  // ───────────────────────────── notifications ─────────────────────────────

  /** Every `tool/result` this connection receives: its own calls' and those of subscribed threads. */
  onToolResult(handler: (note: ToolResultNotification) => void): Disposable {
    return this.connection.onNotification(P.ToolResultNotificationType, handler);
  }

  /** Every `tool/approval`: a call of this connection, or of a subscribed thread, waits for a person's decision. */
  onToolApproval(handler: (note: P.ToolApprovalNotification) => void): Disposable {
    return this.connection.onNotification(P.ToolApprovalNotificationType, handler);
  }

  /** Every notification, whatever its method (`tool/result`, `tool/approval`). */
  onAnyNotification(handler: (method: string, params: unknown) => void): Disposable {
    return this.connection.onNotification((method: string, params: unknown) => handler(method, params));
  }

  /** The connection ended: the daemon exited, the socket closed, or `close()` was called. Called once. */
  onClose(handler: () => void): Disposable {
    // vscode-jsonrpc reports no close once the connection is disposed — as `close()` does, and the client does
    // once the daemon's last message is dispatched — so its dispose counts as the close too.
    let called = false;
    const once = () => {
      if (called) return;
      called = true;
      handler();
    };
    const subs = [this.connection.onClose(once), this.connection.onDispose(once)];
    return { dispose: () => subs.forEach((d) => d.dispose()) };
  }

  // ───────────────────────────── ending ─────────────────────────────

  /**
   * Runs a request; when it fails because a daemon this client spawned went
   * away (and not because `close()` was called), fails instead with
   * `DaemonExitedError` — the exit code and the daemon's own last stderr line,
   * rather than vscode-jsonrpc's "connection got disposed".
   */
  private async explained<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (err) {
      if (!this.process || this.closed || !lostConnection(err)) throw err;
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([this.exited, new Promise<'running'>((r) => (timer = setTimeout(() => r('running'), EXIT_REPORT_WAIT_MS)))]);
      clearTimeout(timer);
      if (code === 'running') throw err;
      throw new DaemonExitedError(code, lastLine(this.stderrText));
    }
  }

  /** The daemon's stderr so far (its JSON log lines), when this client spawned it. */
  stderr(): string {
    return this.stderrText;
  }

  /**
   * The polite end of a spawned daemon: `shutdown`, `exit`, then waits for it
   * to exit (closing stdin, SIGTERM, SIGKILL if it does not). Resolves with
   * its exit code. Only for a client made by `spawn`.
   */
  async stop(): Promise<number | null> {
    const proc = this.process;
    if (!proc) throw new Error('toolgate/client: stop() is for a spawned daemon; use close()');
    if (proc.exitCode === null && proc.signalCode === null) {
      try {
        await this.shutdown();
        await this.exit();
      } catch {
        /* already gone */
      }
    }
    await this.close();
    return this.exited;
  }

  /** Ends the connection (and a spawned daemon, without `shutdown`: stdin closes, which stops it with 0). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.closer();
    this.connection.dispose();
  }
}

/** The last non-empty line of a process's stderr. */
function lastLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.at(-1) ?? '';
}

/** A session opened on one client: the calls that take a `session_id`, with it filled in. */
export class Session {
  constructor(
    readonly client: ToolgateClient,
    readonly info: P.SessionOpenResult,
  ) {}

  get id(): string {
    return this.info.session_id;
  }

  /** `tool/invoke` of what the model wrote (`args`), on a thread, as one tool call. */
  invoke(threadId: string, toolCallId: string, args: ToolCallArgs, token?: CancellationToken): Promise<ToolResponse> {
    return this.client.invoke({ session_id: this.id, thread_id: threadId, tool_call_id: toolCallId, args }, token);
  }

  /**
   * `tool/invoke`, also returning the call's `tool/result` notifications. The
   * daemon sends them all before the response, so when this resolves the
   * list is complete (a batch: one per item, then the final one).
   */
  async invokeWithNotifications(
    threadId: string,
    toolCallId: string,
    args: ToolCallArgs,
  ): Promise<{ response: ToolResponse; notifications: ToolResultNotification[] }> {
    const notifications: ToolResultNotification[] = [];
    const listener = this.client.onToolResult((n) => {
      if (n.thread_id === threadId && n.tool_call_id === toolCallId) notifications.push(n);
    });
    try {
      const response = await this.invoke(threadId, toolCallId, args);
      return { response, notifications };
    } finally {
      listener.dispose();
    }
  }

  append(threadId: string, role: 'user' | 'assistant', content: string, workerOutput?: P.WorkerOutput): Promise<P.MessageAppendResult> {
    return this.client.appendMessage({
      session_id: this.id,
      thread_id: threadId,
      role,
      content,
      ...(workerOutput === undefined ? {} : { worker_output: workerOutput }),
    });
  }

  history(threadId: string, opts: Omit<P.HistoryGetParams, 'session_id' | 'thread_id'> = {}): Promise<P.HistoryGetResult> {
    return this.client.getHistory({ session_id: this.id, thread_id: threadId, ...opts });
  }

  threads(limit?: number): Promise<P.ThreadListResult> {
    return this.client.listThreads({ session_id: this.id, ...(limit === undefined ? {} : { limit }) });
  }

  /** `call/get`: the call's state (running, done with its outcome). */
  call(threadId: string, toolCallId: string): Promise<P.CallGetResult> {
    return this.client.getCall({ session_id: this.id, thread_id: threadId, tool_call_id: toolCallId });
  }

  /** `call/cancel`: stops the call if it runs; answers its stored outcome. */
  cancel(threadId: string, toolCallId: string): Promise<P.CallCancelResult> {
    return this.client.cancelCall({ session_id: this.id, thread_id: threadId, tool_call_id: toolCallId });
  }

  /** `call/approve`: the call awaiting approval with exactly these args (`args_sha256` of `tool/approval`) runs once. */
  approve(threadId: string, toolCallId: string, argsSha256: string): Promise<P.CallCancelResult> {
    return this.client.approveCall({ session_id: this.id, thread_id: threadId, tool_call_id: toolCallId, args_sha256: argsSha256 });
  }

  /** `call/deny`: the call ends as the failure APPROVAL_DENIED, carrying `reason` to the model. */
  deny(threadId: string, toolCallId: string, argsSha256: string, reason?: string): Promise<P.CallCancelResult> {
    return this.client.denyCall({ session_id: this.id, thread_id: threadId, tool_call_id: toolCallId, args_sha256: argsSha256, ...(reason === undefined ? {} : { reason }) });
  }

  subscribe(threadId: string): Promise<P.ThreadSubscribeResult> {
    return this.client.subscribe({ session_id: this.id, thread_id: threadId });
  }

  unsubscribe(threadId: string): Promise<P.ThreadSubscribeResult> {
    return this.client.unsubscribe({ session_id: this.id, thread_id: threadId });
  }

  skills(): Promise<P.SkillsListResult> {
    return this.client.listSkills({ session_id: this.id });
  }

  readSkill(name: string, path?: string): Promise<P.SkillsReadResult> {
    return this.client.readSkill({ session_id: this.id, name, ...(path === undefined ? {} : { path }) });
  }
}

function missingToken(): never {
  throw new Error('toolgate/client: openSession() needs a token (or a client made with { token })');
}

/** Closes stdin (a clean goodbye), then SIGTERM, then SIGKILL, each after a few seconds. */
async function stopChild(proc: ChildProcessWithoutNullStreams, exited: Promise<number | null>): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const within = (ms: number) => Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms).unref())]);
  proc.stdin.end();
  if ((await within(10_000)) !== 'timeout') return;
  proc.kill('SIGTERM');
  if ((await within(3000)) !== 'timeout') return;
  proc.kill('SIGKILL');
  await exited;
}
