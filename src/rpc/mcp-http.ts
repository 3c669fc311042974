/**
 * MCP over Streamable HTTP at `/mcp` on the `--ws` server.
 *
 * Every request: `Host`/`Origin` checked (DNS-rebinding protection, 403),
 * the user bearer token verified (401 + `WWW-Authenticate: Bearer`, no
 * OAuth metadata), the body bounded like a `/rpc` frame (413). Then the
 * SDK's own classifier (`isLegacyRequest`) routes it:
 *
 * - 2026-07-28 requests (per-request `_meta` envelope, no session) go to
 *   `createMcpHandler`, one server instance per request, thread `mcp`;
 * - 2025-era requests are served sessionfully: `initialize` opens an MCP
 *   session (`Mcp-Session-Id`) bound to the user who opened it; POST, GET
 *   (SSE) and DELETE then reach that session's transport, and only with the
 *   same user's token.
 *
 * The token is never echoed or logged; the handlers see only the user id.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import {
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  type AuthInfo,
  type McpRequestContext,
} from '@modelcontextprotocol/server';
import {
  hostHeaderValidation,
  localhostHostValidation,
  localhostOriginValidation,
  NodeStreamableHTTPServerTransport,
  originValidation,
  toNodeHandler,
  toWebRequest,
} from '@modelcontextprotocol/node';
import { Unauthorized, verifyBearer } from '../daemon/bearer-auth.js';
import { mcpAgentName, mcpSession, provisionMcpUser } from '../daemon/mcp-session.js';
import { RpcErrorCode } from './errors.js';
import { buildMcpServer } from './mcp-server.js';
import { SkillCatalogs } from './mcp-skills.js';
import type { McpCallDeps, McpPrincipal } from './mcp-tool.js';
import { MAX_BEARER_TOKEN_LENGTH as MAX_TOKEN } from '../protocol/limits.js';

export const MCP_PATH = '/mcp';
/** MCP sessions one user may hold open at once; past it, the oldest idle one is not evicted — the new one is refused. */
const MAX_SESSIONS_PER_USER = 32;
/** An MCP session nobody used for this long is closed (its client re-initializes). */
const DEFAULT_IDLE_MS = 30 * 60_000;

export interface McpHttpOptions extends McpCallDeps {
  maxMessageBytes: number;
  maxInFlight: number;
  /** Host header names accepted (port-agnostic); unset → loopback only. */
  allowedHosts?: string[] | undefined;
  /** Origins accepted (hostnames, full origins, or `scheme://*`); unset → loopback only. A request without Origin passes. */
  allowedOrigins?: string[] | undefined;
  idleMs?: number;
  catalogs?: SkillCatalogs;
}

export interface McpHttpServer {
  route(req: IncomingMessage, res: ServerResponse): boolean;
  sessionCount(): number;
  closeAll(): Promise<void>;
}

interface SessionEntry {
  transport: NodeStreamableHTTPServerTransport;
  userId: string;
  lastSeen: number;
  busy: number;
}

/** A config entry as the SDK's guards take it: a bare hostname (IPv6 in brackets), without scheme or port. */
export function hostnameOf(entry: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\/\*$/i.test(entry)) return entry; // `https://*`: any host with that scheme
  if (!entry.includes('://') && !entry.startsWith('[') && entry.split(':').length > 2) return `[${entry}]`; // a bare IPv6 address
  try {
    if (entry.includes('://')) return new URL(entry).hostname;
    return new URL(`http://${entry}`).hostname;
  } catch {
    return entry;
  }
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function bearerOf(header: string | undefined): string | null {
  const m = /^Bearer ([^\s]+)$/i.exec(header ?? '');
  return m && m[1]!.length <= MAX_TOKEN ? m[1]! : null;
}

/** Reads a POST body up to `max` bytes; `null` when it is longer (the rest is discarded, not buffered). */
async function readBody(req: IncomingMessage, max: number): Promise<Buffer | null> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) {
    req.resume();
    return null;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      req.resume();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export function createMcpHttp(opts: McpHttpOptions): McpHttpServer {
  const { daemon } = opts;
  const log = daemon.log.child({ transport: 'mcp-http' });
  const catalogs = opts.catalogs ?? new SkillCatalogs(daemon.log);
  const agent = mcpAgentName(daemon);
  const validateHost = opts.allowedHosts ? hostHeaderValidation(opts.allowedHosts.map(hostnameOf)) : localhostHostValidation();
  const validateOrigin = opts.allowedOrigins ? originValidation(opts.allowedOrigins.map(hostnameOf)) : localhostOriginValidation();
  const sessions = new Map<string, SessionEntry>();
  /** Users (with their claims) provisioned by this server: provisioning is a write, not something to repeat on every request. */
  const provisioned = new Set<string>();
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
      const userId = (ctx.authInfo?.extra as { userId?: string } | undefined)?.userId;
      if (!userId) throw new Error('mcp request without a verified user');
      const session = mcpSession(daemon, userId, agent, 'mcp-http');
      const principal: McpPrincipal = { session, fallbackThread: 'mcp', inFlight: inFlightOf(userId) };
      return buildMcpServer(opts, principal, await catalogs.for(session.enabledSkills));
    },
    { legacy: 'reject', maxRequestBodySize: opts.maxMessageBytes, onerror: (err) => log.log('warn', 'mcp request failed', { err: err.message }) },
  );
  const modernNode = toNodeHandler(modern, {
    maxRequestBodySize: opts.maxMessageBytes,
    onerror: (err) => log.log('warn', 'mcp request failed', { err: err.message }),
  });

  const idle = setInterval(() => {
    const cutoff = Date.now() - (opts.idleMs ?? DEFAULT_IDLE_MS);
    for (const [id, entry] of sessions) {
      if (entry.busy === 0 && entry.lastSeen < cutoff) {
        log.log('info', 'closing an idle mcp session', { mcp_session: id });
        sessions.delete(id);
        void entry.transport.close().catch(() => {});
      }
    }
  }, 60_000);
  idle.unref();

  async function openSession(req: IncomingMessage, res: ServerResponse, userId: string, body: unknown): Promise<void> {
    const open = [...sessions.values()].filter((s) => s.userId === userId).length;
    if (open >= MAX_SESSIONS_PER_USER) {
      jsonRpcError(res, 429, RpcErrorCode.Overloaded, `too many open MCP sessions (at most ${MAX_SESSIONS_PER_USER}); DELETE one first`);
      return;
    }
    const session = mcpSession(daemon, userId, agent, 'mcp-http');
    const principal: McpPrincipal = { session, fallbackThread: 'mcp', inFlight: { count: 0, max: opts.maxInFlight } };
    const entry: SessionEntry = {
      transport: new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, entry);
          log.log('info', 'mcp session opened', { mcp_session: id, user_id: userId, agent });
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
          log.log('info', 'mcp session closed', { mcp_session: id });
        },
      }),
      userId,
      lastSeen: Date.now(),
      busy: 0,
    };
    entry.transport.onclose = () => {
      const id = entry.transport.sessionId;
      if (id) sessions.delete(id);
    };
    const server = buildMcpServer(opts, principal, await catalogs.for(session.enabledSkills));
    await server.connect(entry.transport);
    await entry.transport.handleRequest(req, res, body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!validateHost(req, res) || !validateOrigin(req, res)) return;
    if (!opts.accepting()) {
      jsonRpcError(res, 503, RpcErrorCode.ShuttingDown, 'the daemon is shutting down');
      return;
    }
    const token = bearerOf(req.headers.authorization);
    if (!token) {
      jsonRpcError(res, 401, RpcErrorCode.Unauthorized, 'a user bearer token is required: Authorization: Bearer <token>', { 'www-authenticate': 'Bearer' });
      return;
    }
    let userId: string;
    try {
      const identity = await verifyBearer(token, daemon.bearerKeys, daemon.env, { maxLifetimeS: daemon.config.auth?.maxTokenLifetimeS });
      // Provision again only when the claims changed (name, phone, role), as `session/open` would record them.
      const claims = JSON.stringify([identity.userId, identity.name, identity.phone, identity.role]);
      userId = provisioned.has(claims) ? identity.userId : await provisionMcpUser(daemon, identity);
      if (provisioned.size >= 10_000) provisioned.clear(); // a bound, not an eviction policy: forgetting only costs a write
      provisioned.add(claims);
    } catch (err) {
      if (!(err instanceof Unauthorized)) throw err;
      jsonRpcError(res, 401, RpcErrorCode.Unauthorized, err.message, { 'www-authenticate': 'Bearer error="invalid_token"' });
      return;
    }
    // Only what the handlers need: never the token itself.
    const auth: AuthInfo = { token: '', clientId: userId, scopes: [], extra: { userId } };
    (req as IncomingMessage & { auth?: AuthInfo }).auth = auth;

    let body: unknown;
    if (req.method === 'POST') {
      const raw = await readBody(req, opts.maxMessageBytes);
      if (raw === null) {
        jsonRpcError(res, 413, RpcErrorCode.InvalidRequest, `message larger than ${opts.maxMessageBytes} bytes`);
        return;
      }
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        jsonRpcError(res, 400, RpcErrorCode.ParseError, 'the body is not valid JSON');
        return;
      }
      if (!(await isLegacyRequest(await toWebRequest(req, body), body, { maxRequestBodySize: opts.maxMessageBytes }))) {
        await modernNode(req, res, body);
        return;
      }
    }

    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string' && sid.length > 0) {
      const entry = sessions.get(sid);
      // Another user's session answers exactly as one that does not exist.
      if (!entry || entry.userId !== userId) {
        jsonRpcError(res, 404, RpcErrorCode.InvalidRequest, 'MCP session not found');
        return;
      }
      entry.lastSeen = Date.now();
      entry.busy += 1;
      try {
        await entry.transport.handleRequest(req, res, body);
      } finally {
        entry.busy -= 1;
        entry.lastSeen = Date.now();
      }
      return;
    }
    if (req.method === 'POST' && isInitializeRequest(body)) {
      await openSession(req, res, userId, body);
      return;
    }
    jsonRpcError(res, 400, RpcErrorCode.InvalidRequest, 'Mcp-Session-Id header is required (send initialize first)');
  }

  return {
    route(req, res) {
      const path = (req.url ?? '/').split('?')[0];
      if (path !== MCP_PATH) return false;
      handle(req, res).catch((err: unknown) => {
        log.log('error', 'mcp http handler failed', { err: (err as Error).message });
        jsonRpcError(res, 500, RpcErrorCode.InternalError, 'internal error');
      });
      return true;
    },
    sessionCount: () => sessions.size,
    async closeAll() {
      clearInterval(idle);
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled([...all.map((s) => s.transport.close()), modern.close()]);
    },
  };
}
