/**
 * MCP over Streamable HTTP at `/mcp` on the `--ws` server.
 *
 * Every request: `Host`/`Origin` checked (DNS-rebinding protection, 403),
 * the user bearer token verified (401 + `WWW-Authenticate: Bearer`, naming
 * the OAuth metadata when `auth.issuer` is set), the body bounded like a `/rpc` frame (413). Then the
 * SDK's own classifier (`isLegacyRequest`) routes it:
 *
 * - 2026-07-28 requests (per-request `_meta` envelope, no session) go to
 *   `createMcpHandler`, one server instance per request, thread `mcp`;
 * - 2025-era requests are served sessionfully: `initialize` opens an MCP
 *   session (`Mcp-Session-Id`) bound to the user who opened it; POST, GET
 *   (SSE) and DELETE then reach that session's transport, and only with the
 *   same user's token. The session is stored in the database, so any daemon
 *   on it serves any of these requests (mcp-http-sessions.ts).
 *
 * The token is never echoed or logged; the handlers see only the user id.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  type AuthInfo,
  type McpRequestContext,
} from '@modelcontextprotocol/server';
import { toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import { AuthError, authenticateUser, type Principal } from '../auth/user-auth.js';
import { withoutHeaderEchoes } from './header-echo.js';
import { honourConnectionClose } from './connection-close.js';
import { findSecretIn } from '../codec/secret-scan.js';
import { mcpAgentName, mcpRequestSession } from './mcp-session.js';
import { McpHttpSessions, SESSIONS_FULL, type McpHttpSessionsDeps } from './mcp-http-sessions.js';
import { RpcErrorCode } from '../rpc/errors.js';
import { isValidId } from '../rpc/message-shape.js';
import { MAX_JSON_DEPTH, jsonDepthExceeds } from '../protocol/json.js';
import { buildMcpServer, type McpServerDeps } from './mcp-server.js';
import { initializeParamsProblem } from './mcp-task-server.js';
import { SkillCatalogs } from './mcp-skills.js';
import type { McpPrincipal } from './mcp-tool.js';
import type { ServeContext } from '../rpc/serve-context.js';
import { BodyAbortedError, readBody } from '../rpc/read-body.js';
import { requestTarget } from '../rpc/request-target.js';

export { hostnameOf } from '../rpc/http-guard.js';

export const MCP_PATH = '/mcp';
/** An MCP session nobody used for this long is closed (its client re-initializes). */
const DEFAULT_IDLE_MS = 30 * 60_000;

/** What only `/mcp` adds to the serve context. */
export interface McpHttpOptions {
  idleMs?: number;
  catalogs?: SkillCatalogs;
}

export interface McpHttpServer {
  route(req: IncomingMessage, res: ServerResponse): boolean;
  sessionCount(): number;
  closeAll(): Promise<void>;
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}, id: string | number | null = null): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id }));
}

/** A JSON-RPC `initialize` request whose params do not fit the spec: its id and the -32602 message; else null. */
function refusedInitialize(body: unknown): { id: string | number; message: string } | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { jsonrpc, method, id, params } = body as Record<string, unknown>;
  if (jsonrpc !== '2.0' || method !== 'initialize' || !isValidId(id) || id === null) return null;
  const message = initializeParamsProblem(params);
  return message ? { id, message } : null;
}

/**
 * Nesting a body may have: the arguments' own limit (MAX_JSON_DEPTH, as on every
 * transport) plus the envelope around them (`params.arguments.input`, `_meta`).
 * Shallower bodies go on to the schemas, which answer -32602 as stdio does.
 */
const MAX_BODY_DEPTH = MAX_JSON_DEPTH + 8;

/** HTTP 400 with -32602, naming the request's id when it has a usable one. */
function tooDeep(res: ServerResponse, body: unknown): void {
  const raw = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as { id?: unknown }).id : undefined;
  const id = isValidId(raw) ? raw : null;
  res.writeHead(400, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: RpcErrorCode.InvalidParams, message: `nested deeper than ${MAX_JSON_DEPTH} levels` } }));
}

/** What `/mcp` reads: its MCP servers', and its stored sessions' (the token's verification among them). */
export type McpHttpDeps = McpServerDeps['services'] & McpHttpSessionsDeps['services'];

export function createMcpHttp(ctx: ServeContext<McpHttpDeps>, extra: McpHttpOptions = {}): McpHttpServer {
  const { services } = ctx;
  const opts = { ...ctx, ...extra, maxMessageBytes: ctx.limits.maxMessageBytes, maxInFlight: ctx.limits.maxInFlight };
  const log = services.log.child({ transport: 'mcp-http' });
  const catalogs = opts.catalogs ?? new SkillCatalogs(services.log);
  // Read at each session's open and each sessionless request: a configuration reload changes `mcp.agent` for
  // the MCP sessions opened from then on (configuration.md).
  const agent = () => mcpAgentName(services);
  /** Sessionful (2025-11-25) sessions: stored in the database, served by whichever daemon a request reaches. */
  const sessions = new McpHttpSessions({
    services,
    agent,
    idleMs: opts.idleMs ?? DEFAULT_IDLE_MS,
    maxMessageBytes: opts.maxMessageBytes,
    log,
    // A server that lives with its session: it follows a SIGHUP's change of the session's skills and actions.
    build: async (session) =>
      buildMcpServer(opts, { session, fallbackThread: 'mcp', inFlight: { count: 0, max: opts.maxInFlight } }, await catalogs.live(session), { followReloads: true }),
  });
  /** Sessionless (2026-07-28) calls in flight, per user. */
  const sessionlessInFlight = new Map<string, { count: number; max: number }>();

  const inFlightOf = (userId: string) => {
    let counter = sessionlessInFlight.get(userId);
    if (!counter) sessionlessInFlight.set(userId, (counter = { count: 0, max: opts.maxInFlight }));
    return counter;
  };

  // 2026-07-28: a fresh server per request, for the user the route verified.
  const modern = createMcpHandler(
    async (ctx: McpRequestContext) => {
      const verified = (ctx.authInfo?.extra as { principal?: Principal } | undefined)?.principal;
      if (!verified) throw new Error('mcp request without a verified user');
      const session = mcpRequestSession(services, verified, agent());
      const principal: McpPrincipal = { session, fallbackThread: 'mcp', inFlight: inFlightOf(verified.userId) };
      return buildMcpServer(opts, principal, await catalogs.for(session.enabledSkills));
    },
    { legacy: 'reject', maxRequestBodySize: opts.maxMessageBytes, onerror: (err) => log.log('warn', 'mcp request failed', { err: err.message }) },
  );
  const modernNode = toNodeHandler(modern, {
    maxRequestBodySize: opts.maxMessageBytes,
    onerror: (err) => log.log('warn', 'mcp request failed', { err: err.message }),
  });

  const stopHearingIdle = services.sessions.onIdle((s) => {
    if (sessions.has(s.id)) log.log('info', 'closing an idle mcp session', { mcp_session: s.id });
  });

  /**
   * `initialize` without a session: the session is stored (at most 32 per
   * user, counted in the database across daemons) and its id is the
   * Mcp-Session-Id. The client's initialize params are kept to restore the
   * session on other daemons, so a token offered in them is refused first.
   */
  async function openSession(req: IncomingMessage, res: ServerResponse, principal: Principal, body: { id?: unknown; params?: unknown }): Promise<void> {
    if (findSecretIn(body.params ?? {}, services.secrets) !== null) {
      res.writeHead(400, { 'content-type': 'application/json' });
      const message = 'the initialize params carry a bearer token or credential; such text is refused and nothing was stored';
      res.end(JSON.stringify({ jsonrpc: '2.0', id: isValidId(body.id) ? body.id : null, error: { code: RpcErrorCode.InvalidParams, message } }));
      return;
    }
    if (!(await sessions.open(req, res, principal, body))) jsonRpcError(res, 429, RpcErrorCode.Overloaded, SESSIONS_FULL);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Host and Origin are checked for every route by the HTTP server (http-guard.ts).
    withoutHeaderEchoes(req, res);
    honourConnectionClose(req, res);
    if (!opts.accepting()) {
      jsonRpcError(res, 503, RpcErrorCode.ShuttingDown, 'the daemon is shutting down');
      return;
    }
    let principal: Principal;
    try {
      principal = await authenticateUser(services, { header: req.headers.authorization });
    } catch (err) {
      if (!(err instanceof AuthError)) throw err;
      if (err.reason === 'unavailable') {
        jsonRpcError(res, 503, RpcErrorCode.InternalError, err.message, { 'retry-after': '5' });
        return;
      }
      // With auth.issuer, the challenge names the RFC 9728 metadata (how an OAuth client finds the issuer).
      const challenge = services.oauth?.challenge(err.reason) ?? (err.reason === 'missing' ? 'Bearer' : 'Bearer error="invalid_token"');
      jsonRpcError(res, 401, RpcErrorCode.Unauthorized, err.message, { 'www-authenticate': challenge });
      return;
    }
    const userId = principal.userId;
    // Only what the handlers need: never the token itself.
    const auth: AuthInfo = { token: '', clientId: userId, scopes: [], extra: { userId, principal } };
    (req as IncomingMessage & { auth?: AuthInfo }).auth = auth;

    let body: unknown;
    if (req.method === 'POST') {
      const raw = await readBody(req, opts.maxMessageBytes);
      if (raw === null) {
        jsonRpcError(res, 413, RpcErrorCode.InvalidRequest, `message larger than ${opts.maxMessageBytes} bytes`);
        return;
      }
      // Decoded with replacement, a stray byte would reach the server as U+FFFD and be stored rewritten.
      if (!isUtf8(raw)) {
        jsonRpcError(res, 400, RpcErrorCode.ParseError, 'the body is not UTF-8');
        return;
      }
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        jsonRpcError(res, 400, RpcErrorCode.ParseError, 'the body is not valid JSON');
        return;
      }
      // Before the SDK's recursive validation sees it: thousands of levels in `arguments`
      // or `_meta` overflowed its stack (HTTP 500); stdio and WebSocket answer -32602.
      if (jsonDepthExceeds(body, MAX_BODY_DEPTH)) {
        tooDeep(res, body);
        return;
      }
      if (!(await isLegacyRequest(await toWebRequest(req, body), body, { maxRequestBodySize: opts.maxMessageBytes }))) {
        await modernNode(req, res, body);
        return;
      }
    }

    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string' && sid.length > 0) {
      const session = await sessions.find(sid, principal);
      // Another user's session answers exactly as one that does not exist; so does one past its token's exp.
      if (!session) {
        jsonRpcError(res, 404, RpcErrorCode.InvalidRequest, 'MCP session not found');
        return;
      }
      await sessions.serve(session, req, res, body);
      return;
    }
    if (req.method === 'POST' && isInitializeRequest(body)) {
      await openSession(req, res, principal, body as { id?: unknown; params?: unknown });
      return;
    }
    // An `initialize` whose params MCP's schema refuses opens no session: said as what it is, to its own id.
    const refused = req.method === 'POST' ? refusedInitialize(body) : null;
    if (refused) {
      jsonRpcError(res, 400, RpcErrorCode.InvalidParams, refused.message, {}, refused.id);
      return;
    }
    jsonRpcError(res, 400, RpcErrorCode.InvalidRequest, 'Mcp-Session-Id header is required (send initialize first)');
  }

  return {
    route(req, res) {
      if (requestTarget(req.url)?.pathname !== MCP_PATH) return false;
      handle(req, res).catch((err: unknown) => {
        // The client's doing, with nobody left to answer: said as what it is.
        if (err instanceof BodyAbortedError) return log.log('info', err.message, { route: MCP_PATH });
        log.log('error', 'mcp http handler failed', { err: (err as Error).message });
        jsonRpcError(res, 500, RpcErrorCode.InternalError, 'internal error');
      });
      return true;
    },
    sessionCount: () => sessions.size,
    async closeAll() {
      stopHearingIdle();
      await Promise.allSettled([sessions.closeAll(), modern.close()]);
    },
  };
}
