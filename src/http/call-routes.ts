/**
 * A call's state and its approval for web front ends (contract section 17),
 * on the `--ws` port, for the user of the `Authorization: Bearer` token:
 *
 * - `GET /threads/{thread_id}/calls/{tool_call_id}` → 200 with the `call/get`
 *   result;
 * - `POST /threads/{thread_id}/calls/{tool_call_id}/approval` with
 *   `{decision: "approve"|"deny", args_sha256, reason?}` → 200 `{state,
 *   outcome?}` as `call/approve` / `call/deny` answer.
 *
 * - `GET /calls?state=awaiting_approval&limit=&cursor=` → 200 with the
 *   `call/list` result: the user's calls awaiting approval, one page (400 for
 *   a limit or cursor that is not one).
 *
 * 404 for a call that is not the user's (or none), 409 for a digest that is
 * not the call's, 413 for a body over 16 KiB, 400 for a body that is not a decision (or whose reason
 * carries a token, U+0000 or an unpaired surrogate: refused as `call/deny`
 * refuses it), 401 without a valid token. The same services as the JSON-RPC methods
 * decide; the surface audited is `http`.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CallApprovalBody } from '../protocol/methods.js';
import { findSecretIn } from '../codec/secret-scan.js';
import { malformedReason } from '../codec/well-formed.js';
import { AuthError, authenticateUser, type UserAuthDeps } from '../auth/user-auth.js';
import { DaemonError } from '../runtime/errors.js';
import { getCall, type CallServiceDeps } from '../calls/call-service.js';
import { decideCall, type DecideDeps } from '../calls/approvals.js';
import { listCalls } from '../calls/call-list.js';
import type { ServeContext } from '../rpc/serve-context.js';
import { rawPath, requestTarget } from '../rpc/request-target.js';
import { BodyAbortedError, readBody } from '../rpc/read-body.js';

const PATH = /^\/threads\/([^/]+)\/calls\/([^/]+)(\/approval)?$/;
const LIST_PATH = '/calls';
const MAX_ID = 200;
/** A decision is a digest and at most 2000 characters of reason: anything longer is not one. */
const MAX_BODY_BYTES = 16 * 1024;

/** What the routes read: the token's verification, the call service and its decisions (`call/list` reads the store). */
export type CallRouteDeps = UserAuthDeps & CallServiceDeps & DecideDeps;

export function callRoutes(ctx: ServeContext<CallRouteDeps>): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { services } = ctx;
  return (req, res) => {
    const url = requestTarget(req.url);
    if (url?.pathname === LIST_PATH) {
      if (req.method !== 'GET') {
        sendJson(res, 405, { error: 'method not allowed' }, { allow: 'GET' });
        return true;
      }
      list(ctx, req, res, url.searchParams).catch((err: unknown) => {
        services.log.log('error', 'call route failed', { err });
        if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
        else res.end();
      });
      return true;
    }
    // The ids as sent: `.` and `..` are ids too, which the URL's path has removed.
    const match = url && PATH.exec(rawPath(req.url) ?? '');
    if (!match) return false;
    const approval = match[3] !== undefined;
    const allowed = approval ? 'POST' : 'GET';
    if (req.method !== allowed) {
      sendJson(res, 405, { error: 'method not allowed' }, { allow: allowed });
      return true;
    }
    answer(ctx, req, res, match[1]!, match[2]!, approval).catch((err: unknown) => {
      // The client's doing, with nobody left to answer: said as what it is, no stack.
      if (err instanceof BodyAbortedError) return services.log.log('info', err.message, { route: 'call approval' });
      services.log.log('error', 'call route failed', { err });
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.end();
    });
    return true;
  };
}

/** The token's user, or undefined once the refusal (401, or 503 while keys cannot be fetched) is sent. */
async function userOf(ctx: ServeContext<CallRouteDeps>, req: IncomingMessage, res: ServerResponse): Promise<string | undefined> {
  try {
    return (await authenticateUser(ctx.services, { header: req.headers.authorization })).userId;
  } catch (err) {
    if (!(err instanceof AuthError)) throw err;
    if (err.reason === 'unavailable') return void sendJson(res, 503, { error: err.message }, { 'retry-after': '5' });
    const missing = err.reason === 'missing';
    sendJson(res, 401, { error: missing ? 'missing or malformed bearer token' : err.message }, { 'www-authenticate': missing ? 'Bearer' : 'Bearer error="invalid_token"' });
    return undefined;
  }
}

/** `GET /calls`: one page of the user's calls awaiting approval, as `call/list` answers it. */
async function list(ctx: ServeContext<CallRouteDeps>, req: IncomingMessage, res: ServerResponse, query: URLSearchParams): Promise<void> {
  const userId = await userOf(ctx, req, res);
  if (userId === undefined) return;
  const state = query.get('state');
  const limitText = query.get('limit');
  // Decimal digits only, as call/list's integer: Number() would read `0x10`, `1e1`, ` 5` or `5.0` as a limit.
  const limit = limitText === null ? undefined : /^[1-9][0-9]{0,2}$/.test(limitText) ? Number(limitText) : Number.NaN;
  const cursor = query.get('cursor') ?? undefined;
  const usage = 'query: state=awaiting_approval (optional), limit=1..100, cursor=<a next_cursor>';
  if ((state !== null && state !== 'awaiting_approval') || (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 100))) {
    return sendJson(res, 400, { error: usage });
  }
  if (cursor !== undefined && (cursor.length === 0 || cursor.length > 1000)) return sendJson(res, 400, { error: usage });
  try {
    return sendJson(res, 200, await listCalls(ctx.services, userId, { ...(limit !== undefined ? { limit } : {}), ...(cursor !== undefined ? { cursor } : {}) }));
  } catch (err) {
    if (err instanceof DaemonError && err.code === 'INVALID_CURSOR') return sendJson(res, 400, { error: err.message });
    throw err;
  }
}

async function answer(ctx: ServeContext<CallRouteDeps>, req: IncomingMessage, res: ServerResponse, rawThread: string, rawCall: string, approval: boolean): Promise<void> {
  const { services } = ctx;
  const userId = await userOf(ctx, req, res);
  if (userId === undefined) return;
  const threadId = decodeId(rawThread);
  const toolCallId = decodeId(rawCall);
  if (threadId === null || toolCallId === null) return sendJson(res, 404, { error: 'call not found' });
  const key = { userId, threadId, toolCallId };
  try {
    if (!approval) return sendJson(res, 200, await getCall(services, key));
    const raw = await readBody(req, MAX_BODY_BYTES);
    // Over the cap, as /mcp answers a body over its own: 413 (the rest of it is discarded as it streams).
    if (raw === null) return sendJson(res, 413, { error: `body larger than ${MAX_BODY_BYTES} bytes; a decision is far shorter` });
    let body: unknown;
    try {
      // Not UTF-8: no decision (a reason decoded with replacement would be stored rewritten).
      body = isUtf8(raw) ? JSON.parse(raw.toString('utf8')) : undefined;
    } catch {
      body = undefined;
    }
    const parsed = CallApprovalBody.safeParse(body);
    if (!parsed.success) {
      return sendJson(res, 400, { error: 'the body must be {"decision": "approve"|"deny", "args_sha256": "<64 hex>", "reason"?: string}' });
    }
    if (parsed.data.reason !== undefined && findSecretIn(parsed.data.reason, services.secrets ?? [], 'reason') !== null) {
      return sendJson(res, 400, { error: 'reason carries a bearer token or credential; such text is refused and nothing was decided' });
    }
    // No engine stores it as it is (contract section 21): refused as the JSON-RPC dispatcher refuses it.
    const malformed = parsed.data.reason === undefined ? null : malformedReason(parsed.data.reason);
    if (malformed) return sendJson(res, 400, { error: `reason ${malformed}, which no string may hold; send well-formed text; nothing was decided` });
    const { decision, args_sha256: argsSha256, reason } = parsed.data;
    return sendJson(res, 200, await decideCall(services, key, { decision, argsSha256, reason, surface: 'http' }, services.log));
  } catch (err) {
    if (err instanceof DaemonError && err.code === 'CALL_NOT_FOUND') return sendJson(res, 404, { error: err.message });
    if (err instanceof DaemonError && err.code === 'ARGS_MISMATCH') return sendJson(res, 409, { error: err.message });
    throw err;
  }
}

function decodeId(raw: string): string | null {
  try {
    const id = decodeURIComponent(raw);
    // A lone surrogate is invalid UTF-8 (decodeURIComponent throws); U+0000 is in no id (contract section 21).
    return id.length > 0 && id.length <= MAX_ID && malformedReason(id) === null ? id : null;
  } catch {
    return null;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));
}
