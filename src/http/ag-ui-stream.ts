/**
 * `GET /threads/{thread_id}/events` on the `--ws` server: a thread's whole
 * conversation as AG-UI events over Server-Sent Events. The stream first
 * replays the thread's stored messages, oldest first, then pushes each new
 * one as it is stored (it listens on the thread-event bus). Every message is
 * one AG-UI run (src/codec/ag-ui.ts); replayed and live messages are encoded
 * from the same stored row, so both carry the same bytes.
 *
 * Event ids are the thread's message sequence (`threadSeqOf`), written only
 * on a run's RUN_FINISHED frame: a client's Last-Event-ID is therefore always
 * the last whole run it received, and a resume restarts at the next run.
 *
 * Auth is the user's bearer token in `Authorization` (auth.ts); a thread of
 * another user answers exactly as one that never existed. Each stream holds
 * a place in the session registry (at most 16 per user) and ends at its
 * token's `exp`: the client reconnects with a fresh token and resumes by
 * Last-Event-ID.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { encodeApprovalAsAgUiRun, encodeMessageAsAgUiRun, sseFrame, type AgUiMessage } from '../codec/ag-ui.js';
import { malformedReason } from '../codec/well-formed.js';
import type { MessageRow } from '../store/store.js';
import { AuthError, authenticateUser, type UserAuthDeps } from '../auth/user-auth.js';
import { DaemonError } from '../runtime/errors.js';
import type { SessionSlot } from '../sessions/sessions.js';
import type { Services } from '../rpc/services.js';
import { threadSeqOf } from '../threads/thread-events.js';
import { outputOf, uiSchemaOf } from '../threads/message-views.js';
import { rawPath, requestTarget } from '../rpc/request-target.js';
import type { ServeContext } from '../rpc/serve-context.js';

export interface AgUiStreamOptions {
  /** Interval of `: ping` comments that keep proxies from closing an idle stream. */
  pingIntervalMs?: number;
}

const PATH = /^\/threads\/([^/]+)\/events$/;
const MAX_THREAD_ID = 200;
const PAGE = 500;
/** Open streams per user: each holds a socket and a listener. */
const MAX_STREAMS_PER_USER = 16;

/**
 * The route for `createHttpServer`: claims `/threads/{id}/events` and
 * answers it; any other path is left to the next route.
 */
export function agUiStreamRoute(ctx: ServeContext<AgUiDeps>, opts: AgUiStreamOptions = {}): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { services } = ctx;
  const pingIntervalMs = opts.pingIntervalMs ?? 15_000;
  // A client that has this many unsent bytes is dropped (it may resume with Last-Event-ID).
  const maxBufferedBytes = ctx.limits.maxBufferedBytes;
  return (req, res) => {
    const url = requestTarget(req.url);
    // The id as sent: `.` and `..` are thread ids too, which the URL's path has removed.
    const match = url && PATH.exec(rawPath(req.url) ?? '');
    if (!match) return false;
    if (req.method !== 'GET') {
      sendJson(res, 405, { error: 'method not allowed' }, { allow: 'GET' });
      return true;
    }
    stream(services, req, res, url, match[1]!, pingIntervalMs, maxBufferedBytes).catch((err: unknown) => {
      services.log.log('error', 'ag-ui stream failed', { err });
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.end();
    });
    return true;
  };
}

/** What a stream reads of the services: token verification, the session registry, the thread's events and its rows. */
export type AgUiDeps = Pick<Services, 'sessions' | 'store' | 'log' | 'threadEvents' | 'approvals' | 'maxResultBytes' | 'uiCache'> & UserAuthDeps;

async function stream(
  services: AgUiDeps,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  rawThreadId: string,
  pingIntervalMs: number,
  maxBufferedBytes: number,
): Promise<void> {
  let userId: string;
  let slot: SessionSlot;
  let expiresAt: number;
  try {
    ({ userId, expiresAt } = await authenticateUser(services, { header: req.headers.authorization }));
    // The user's place is held from here (before anything else is awaited), so the cap holds under concurrency.
    slot = services.sessions.reserve(`ag-ui_${randomUUID().slice(0, 8)}`, { name: 'event streams', userId, max: MAX_STREAMS_PER_USER });
  } catch (err) {
    if (err instanceof AuthError && err.reason === 'unavailable') {
      sendJson(res, 503, { error: err.message }, { 'retry-after': '5' });
      return;
    }
    if (err instanceof AuthError) {
      const missing = err.reason === 'missing';
      const challenge = missing ? 'Bearer' : 'Bearer error="invalid_token"';
      sendJson(res, 401, { error: missing ? 'missing or malformed bearer token' : err.message }, { 'www-authenticate': challenge });
      return;
    }
    if (err instanceof DaemonError && err.code === 'OVERLOADED') {
      sendJson(res, 429, { error: err.message });
      return;
    }
    throw err;
  }
  const threadId = decodeThreadId(rawThreadId);
  let exists = false;
  try {
    exists = threadId !== null && (await services.store.read((tx) => tx.threads.exists(userId, threadId)));
  } finally {
    if (!exists) slot.release();
  }
  if (!exists || threadId === null) {
    sendJson(res, 404, { error: 'thread not found' });
    return;
  }
  if (res.destroyed || req.socket.destroyed) {
    slot.release();
    return;
  }
  const session = slot.open({ userId, source: 'session', jobId: null, enabledSkills: [], allowedActions: [], expiresAt });
  // Contract section 13: the stream lives no longer than its token; the client resumes with a fresh one.
  services.sessions.onEnd(session.id, () => {
    if (!res.writableEnded) res.end();
  });
  res.once('close', () => services.sessions.close(session.id));

  const resumeAfter = parseEventId(header(req.headers['last-event-id']));
  const replay = resumeAfter !== null || url.searchParams.get('replay') !== '0';
  const log = services.log.child({ thread_id: threadId, user_id: userId });

  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  req.socket.setNoDelay(true);

  // The stream's one cursor, `lastSeq`, is the last message sent. Listen
  // first; while the replay streams out from the store page by page
  // (respecting the socket's backpressure), a live message only raises
  // `heardUpTo`, and the replay reads on until it has sent that far: the bus
  // and the store bring the same rows in the same order, so nothing is
  // missed, nothing is sent twice and nothing is held in memory.
  // Without a replay there is nothing to read: the bus's messages go out as they come, from the position on.
  let live = !replay;
  let heardUpTo = 0;
  let lastSeq = resumeAfter ?? (replay ? 0 : Number.NEGATIVE_INFINITY);
  const send = (row: MessageRow): boolean => {
    if (res.writableEnded) return true; // ended at its token's exp
    const seq = threadSeqOf(row);
    if (seq <= lastSeq) return true;
    lastSeq = seq;
    return res.write(runOf(services, threadId, row));
  };
  /** The first message heard before the stream went live: committed after the listening began. */
  let firstHeard = Number.POSITIVE_INFINITY;
  const stop = services.threadEvents.listen(userId, threadId, ({ row }) => {
    if (!live) {
      firstHeard = Math.min(firstHeard, threadSeqOf(row));
      return void (heardUpTo = Math.max(heardUpTo, threadSeqOf(row)));
    }
    send(row);
    if (res.writableLength > maxBufferedBytes) {
      log.log('warn', 'ag-ui stream dropped: client not reading');
      res.destroy();
    }
  });
  // A call of the thread awaiting approval (contract section 17): a CUSTOM `toolgate.approval` event in a run of its own.
  const stopAsked = services.approvals.listenAsked(userId, threadId, (approval) => {
    if (live && !res.writableEnded) res.write(encodeApprovalAsAgUiRun(threadId, approval).map((e) => sseFrame(undefined, e)).join(''));
  });
  const ping = setInterval(() => res.writableEnded || res.write(': ping\n\n'), pingIntervalMs);
  res.once('close', () => {
    clearInterval(ping);
    stop();
    stopAsked();
    log.log('info', 'ag-ui stream closed');
  });
  // The thread's position is read (PostgreSQL: other daemons' calls reach the listener above from here on).
  await services.threadEvents.ready(userId, threadId);
  if (res.destroyed) return;
  // Only now the headers, even when there is nothing to replay: a client's fetch() resolves on them, and a
  // client of a stream without replay takes that as "subscribed". Sent before the position was read, a call
  // another daemon committed in between was after the client's start but before the stream's, and never sent.
  res.flushHeaders();
  if (resumeAfter !== null) {
    // An id past the thread's end (a stale front end, a thread id used again) resumes at the end: the
    // next message stored goes out, rather than nothing until the thread reaches that id.
    // A message heard meanwhile is past that end, whatever the read below says: it goes out too.
    const end = await services.store.read((tx) => tx.messages.page(userId, threadId, undefined, 1, { withMetadata: false }));
    const endSeq = end.rows.at(-1)?.thread_seq ?? 0;
    if (lastSeq > endSeq) lastSeq = Math.min(endSeq, firstHeard - 1);
    if (res.destroyed) return;
  }

  let replayed = 0;
  if (replay) {
    // A read that comes back empty while a heard message is not sent yet was issued before its
    // commit: one more read has it (the bus hands over only committed messages).
    for (let emptyReads = 0; emptyReads < 2 && !res.destroyed; ) {
      const after = lastSeq;
      const rows = await services.store.read((tx) => tx.messages.messagesAfter(userId, threadId, after, PAGE, services.maxResultBytes));
      if (res.destroyed || res.writableEnded) break;
      if (rows.length === 0) {
        if (lastSeq >= heardUpTo) break;
        emptyReads += 1;
        continue;
      }
      let drained = true;
      for (const row of rows) drained = send(row) && drained;
      replayed += rows.length;
      if (!drained) await new Promise((r) => res.once('drain', r).once('close', r));
    }
  }
  live = true;
  log.log('info', 'ag-ui stream opened', { replayed_messages: replayed });
}

/**
 * A stored message as one AG-UI run in SSE frames. Only the last frame
 * (RUN_FINISHED) carries an `id:`, the message's sequence: a client that
 * loses the connection mid-run still holds the previous run's id, so it
 * resumes at the start of the run it did not finish. A broken tool row
 * yields nothing rather than a half-run.
 */
function runOf(services: Pick<Services, 'uiCache'>, threadId: string, row: MessageRow): string {
  const encoded = runs.get(row);
  if (encoded !== undefined) return encoded;
  const message = agUiMessageOf(services, row);
  let text = '';
  if (message) {
    const at = Date.parse(row.created_at);
    const events = encodeMessageAsAgUiRun(threadId, message, Number.isFinite(at) ? at : undefined);
    const id = String(threadSeqOf(row));
    text = events.map((e, i) => sseFrame(i === events.length - 1 ? id : undefined, e)).join('');
  }
  runs.set(row, text);
  return text;
}

/** A live message's run, encoded once for every stream of its thread (the bus hands them all the same row). */
const runs = new WeakMap<MessageRow, string>();

/** The output is parsed once per row (never, for the daemon's own call); the `ui_schema` is the one history serves. */
function agUiMessageOf(services: Pick<Services, 'uiCache'>, row: MessageRow): AgUiMessage | null {
  if (row.role !== 'tool') return { kind: 'text', id: row.id, role: row.role, content: row.content };
  const output = outputOf(row);
  if (!output) return null;
  return { kind: 'tool', id: row.id, output, text: row.content, uiSchema: uiSchemaOf(services.uiCache, row, output) };
}

/** A Last-Event-ID is a sequence number this stream wrote; anything else is ignored. */
function parseEventId(id: string | undefined): number | null {
  return id !== undefined && /^\d{1,15}$/.test(id.trim()) ? Number(id.trim()) : null;
}

function decodeThreadId(raw: string): string | null {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    return null;
  }
  // `%00` decodes to U+0000, which no thread id holds (no engine stores it as it is).
  return id.length > 0 && id.length <= MAX_THREAD_ID && malformedReason(id) === null ? id : null;
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));
}
