/**
 * `GET /threads/{thread_id}/events` on the `--ws` server: a thread's tool
 * calls as AG-UI events over Server-Sent Events. The stream first replays
 * the thread's stored tool messages, oldest first, then pushes each new one
 * as it is stored. Replayed and live calls are encoded from the same stored
 * row, so both carry the same bytes (`content` is the `tool/invoke` text).
 *
 * Auth is the user's bearer token in `Authorization`; a thread of another
 * user answers exactly as one that never existed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { encodeToolCallAsAgUi, sseFrame } from '../codec/ag-ui.js';
import type { ToolAgentOutput } from '../codec/tool-output.js';
import type { MessageRow } from '../store/store.js';
import { threadKey } from './thread-key.js';
import { Unauthorized, verifyBearer } from './bearer-auth.js';
import type { Daemon } from './daemon.js';
import { compileStoredUi } from './ui.js';

export type ToolMessageListener = (row: MessageRow) => void;

/**
 * Who listens to which thread's new tool messages. `tool/invoke` publishes
 * each tool message right after storing it; a listener's failure never
 * reaches the publisher.
 */
export class ThreadListeners {
  private readonly byThread = new Map<string, Set<ToolMessageListener>>();

  /** Returns the function that stops listening (safe to call twice). */
  listen(userId: string, threadId: string, fn: ToolMessageListener): () => void {
    const key = threadKey(userId, threadId);
    let set = this.byThread.get(key);
    if (!set) this.byThread.set(key, (set = new Set()));
    set.add(fn);
    return () => {
      const current = this.byThread.get(key);
      if (!current?.delete(fn)) return;
      if (current.size === 0) this.byThread.delete(key);
    };
  }

  publish(row: MessageRow): void {
    for (const fn of [...(this.byThread.get(threadKey(row.user_id, row.thread_id)) ?? [])]) {
      try {
        fn(row);
      } catch {
        /* a broken stream must not fail the call that was stored */
      }
    }
  }

  /** Listeners on a user's thread, or on all threads (for tests and diagnostics). */
  count(userId?: string, threadId?: string): number {
    if (userId !== undefined && threadId !== undefined) return this.byThread.get(threadKey(userId, threadId))?.size ?? 0;
    let n = 0;
    for (const set of this.byThread.values()) n += set.size;
    return n;
  }
}

export interface AgUiStreamOptions {
  /** Interval of `: ping` comments that keep proxies from closing an idle stream. */
  pingIntervalMs?: number;
  /** A client that has this many unsent bytes is dropped (it may resume with Last-Event-ID). */
  maxBufferedBytes?: number;
}

const PATH = /^\/threads\/([^/]+)\/events$/;
const MAX_THREAD_ID = 200;
const MAX_TOKEN = 16384;
const PAGE = 500;
/** Open streams per user: each holds a socket and a listener. */
const MAX_STREAMS_PER_USER = 16;
const openStreams = new Map<string, number>();

/**
 * The route for `createHttpServer`: claims `/threads/{id}/events` and
 * answers it; any other path is left to the next route.
 */
export function agUiStreamRoute(daemon: Daemon, opts: AgUiStreamOptions = {}): (req: IncomingMessage, res: ServerResponse) => boolean {
  const pingIntervalMs = opts.pingIntervalMs ?? 15_000;
  const maxBufferedBytes = opts.maxBufferedBytes ?? 64 * 1024 * 1024;
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = PATH.exec(url.pathname);
    if (!match) return false;
    if (req.method !== 'GET') {
      sendJson(res, 405, { error: 'method not allowed' }, { allow: 'GET' });
      return true;
    }
    stream(daemon, req, res, url, match[1]!, pingIntervalMs, maxBufferedBytes).catch((err: unknown) => {
      daemon.log.log('error', 'ag-ui stream failed', { err });
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.end();
    });
    return true;
  };
}

async function stream(
  daemon: Daemon,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  rawThreadId: string,
  pingIntervalMs: number,
  maxBufferedBytes: number,
): Promise<void> {
  const token = bearerOf(req.headers.authorization);
  if (!token) {
    sendJson(res, 401, { error: 'missing or malformed bearer token' }, { 'www-authenticate': 'Bearer' });
    return;
  }
  let userId: string;
  try {
    userId = (await verifyBearer(token, daemon.bearerKeys, daemon.env)).userId;
  } catch (err) {
    if (!(err instanceof Unauthorized)) throw err;
    sendJson(res, 401, { error: err.message }, { 'www-authenticate': 'Bearer error="invalid_token"' });
    return;
  }
  const threadId = decodeThreadId(rawThreadId);
  if (threadId === null || !(await daemon.store.read((tx) => tx.threads.exists(userId, threadId)))) {
    sendJson(res, 404, { error: 'thread not found' });
    return;
  }
  if (res.destroyed || req.socket.destroyed) return;
  const open = openStreams.get(userId) ?? 0;
  if (open >= MAX_STREAMS_PER_USER) {
    sendJson(res, 429, { error: `too many open event streams (limit ${MAX_STREAMS_PER_USER} per user)` });
    return;
  }
  openStreams.set(userId, open + 1);
  res.once('close', () => {
    const n = (openStreams.get(userId) ?? 1) - 1;
    if (n > 0) openStreams.set(userId, n);
    else openStreams.delete(userId);
  });

  const resume = parseEventId(header(req.headers['last-event-id']));
  const replay = resume !== null || url.searchParams.get('replay') !== '0';
  const log = daemon.log.child({ thread_id: threadId, user_id: userId });

  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  req.socket.setNoDelay(true);
  // Send the headers now: a client's fetch() resolves on them, even when there is nothing to replay.
  res.flushHeaders();

  // Listen first and hold live calls back while the replay streams out page
  // by page (respecting the socket's backpressure); then send the held calls
  // the replay did not already cover (by sequence number). Nothing is missed,
  // nothing is sent twice, and a long thread is never held in memory at once.
  const held: MessageRow[] = [];
  let live = false;
  let lastSeq = 0;
  const stop = daemon.threadListeners.listen(userId, threadId, (row) => {
    if (!live) return void held.push(row);
    res.write(framesOf(row).join(''));
    if (res.writableLength > maxBufferedBytes) {
      log.log('warn', 'ag-ui stream dropped: client not reading');
      res.destroy();
    }
  });
  const ping = setInterval(() => res.write(': ping\n\n'), pingIntervalMs);
  res.once('close', () => {
    clearInterval(ping);
    stop();
    log.log('info', 'ag-ui stream closed');
  });

  let replayed = 0;
  if (replay) {
    const resumeSeq = resume ? await daemon.store.read((tx) => tx.messages.seqOf(userId, threadId, resume.messageId)) : undefined;
    lastSeq = resumeSeq === undefined ? 0 : resumeSeq - 1;
    for (;;) {
      const rows = await daemon.store.read((tx) => tx.messages.toolMessagesAfter(userId, threadId, lastSeq, PAGE));
      if (rows.length === 0 || res.destroyed) break;
      const chunk = rows
        .map((row) => framesOf(row).slice(row.thread_seq === resumeSeq ? resume!.index + 1 : 0).join(''))
        .join('');
      lastSeq = rows[rows.length - 1]!.thread_seq;
      replayed += rows.length;
      if (!res.write(chunk)) await new Promise((r) => res.once('drain', r).once('close', r));
    }
  }
  for (const row of held) if (row.thread_seq > lastSeq) res.write(framesOf(row).join(''));
  live = true;
  log.log('info', 'ag-ui stream opened', { replayed_calls: replayed });
}

/** A stored tool message as SSE frames, ids `<message id>:<0..3>`. A broken row yields none. */
function framesOf(row: MessageRow): string[] {
  let output: ToolAgentOutput | undefined;
  try {
    output = (JSON.parse(row.metadata) as { tool_agent_output?: ToolAgentOutput }).tool_agent_output;
  } catch {
    return [];
  }
  if (!output) return [];
  const at = Date.parse(row.created_at);
  const events = encodeToolCallAsAgUi(
    row.thread_id,
    output,
    row.content,
    row.id,
    compileStoredUi(output.ui_hints),
    Number.isFinite(at) ? at : undefined,
  );
  return events.map((e, i) => sseFrame(`${row.id}:${i}`, e));
}

function parseEventId(id: string | undefined): { messageId: string; index: number } | null {
  const m = id === undefined ? null : /^(.{1,200}):([0-3])$/.exec(id);
  return m ? { messageId: m[1]!, index: Number(m[2]) } : null;
}

function decodeThreadId(raw: string): string | null {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    return null;
  }
  return id.length > 0 && id.length <= MAX_THREAD_ID ? id : null;
}

function bearerOf(authorization: string | undefined): string | null {
  const m = authorization === undefined ? null : /^Bearer +([^\s]+) *$/i.exec(authorization);
  return m && m[1]!.length <= MAX_TOKEN ? m[1]! : null;
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));
}
