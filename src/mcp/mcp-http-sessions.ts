/**
 * Sessionful MCP over HTTP (2025-11-25) when any daemon may get any request
 * of a session (contract §20: many daemons on one database behind a
 * round-robin load balancer, no affinity).
 *
 * A session's state lives in the database (`mcp_sessions`): its user, its
 * agent profile, the `exp` of the latest token used on it, its last use, and
 * the client's `initialize` params. Every request naming a session reads
 * that row (`McpSessionsRepo.get`), so the user binding, the expiry and
 * DELETE hold whichever daemon the request reaches; its last use and a
 * later token's `exp` are written back now and then, off the request's
 * path (`use`). The per-user cap is counted there when a session opens.
 *
 * What a daemon keeps in memory is only a cache: the SDK's transport and
 * server of the sessions it has served. A daemon that has not served a
 * session yet restores it with the SDK's own handshake — the stored
 * `initialize` replayed into a fresh transport (whose session id is the
 * stored one) and server, then `notifications/initialized` — so the SDK
 * knows the client's capabilities and version as the daemon that opened it
 * did. Nothing of MCP is hand-rolled. A sweep drops cached sessions whose row
 * is gone (deleted through another daemon, expired, idle) and ends their
 * streams; sessions with a stream open here count as used.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { WebStandardStreamableHTTPServerTransport, type McpServer } from '@modelcontextprotocol/server';
import { toNodeHandler, type NodeMcpRequestHandler } from '@modelcontextprotocol/node';
import type { Principal } from '../auth/user-auth.js';
import type { Services } from '../rpc/services.js';
import type { Logger } from '../runtime/logger.js';
import type { Session } from '../sessions/sessions.js';
import type { McpSessionRow } from '../store/store.js';
import { MAX_MCP_SESSIONS_PER_USER, registerMcpSession, type McpSessionDeps } from './mcp-session.js';
import { RpcErrorCode } from '../rpc/errors.js';

/** How often a daemon checks its cached sessions against the database (a DELETE elsewhere ends streams here within it). */
const SESSION_SWEEP_MS = 1000;

/**
 * How stale a session's recorded last use may get before a request records it again: a tenth of its idle
 * time, at most a minute — so it ends idle between 90% and 100% of its idle time after its last request.
 */
const refreshAfterMs = (idleMs: number) => Math.min(idleMs / 10, 60_000);

/** A session this daemon serves now: the SDK's transport, connected to the session's server. */
interface CachedSession {
  id: string;
  transport: WebStandardStreamableHTTPServerTransport;
  handle: NodeMcpRequestHandler;
  /** Requests in progress here (an open GET stream is one). */
  requests: number;
  /** Ids of the JSON-RPC requests POSTed here whose HTTP exchange has not ended: the SDK keys each answer's stream by it. */
  ids: Set<string | number>;
}

export interface McpHttpSessionsDeps {
  /** The session registry and the store here; also what registering a session needs (mcp-session.ts). */
  services: McpSessionDeps & Pick<Services, 'store'>;
  /** The agent profile a session opened now uses (`mcp.agent`, read at each open: a reload may change it). */
  agent: () => string;
  idleMs: number;
  maxMessageBytes: number;
  log: Logger;
  /** The MCP server of one session. */
  build: (session: Session) => Promise<McpServer>;
}

/** Why `open` did not open: the user's cap is reached. */
export const SESSIONS_FULL = `too many open MCP sessions (at most ${MAX_MCP_SESSIONS_PER_USER} per user); DELETE one first`;

export class McpHttpSessions {
  private readonly cached = new Map<string, CachedSession>();
  /** Restores in progress, so concurrent first requests of one session on this daemon restore it once. */
  private readonly restoring = new Map<string, Promise<CachedSession>>();
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly deps: McpHttpSessionsDeps) {}

  get size(): number {
    return this.cached.size;
  }

  has(id: string): boolean {
    return this.cached.has(id);
  }

  /**
   * `initialize` without a session: stores the session (under the user's cap,
   * counted in the database across daemons), then lets the SDK answer the
   * initialize with the stored id. False, with nothing stored, when the cap is
   * reached. An initialize the SDK refuses leaves nothing behind.
   */
  async open(req: IncomingMessage, res: ServerResponse, principal: Principal, body: { params?: unknown }): Promise<boolean> {
    const { services, idleMs } = this.deps;
    const agent = this.deps.agent();
    const id = `ses_${randomUUID()}`;
    const now = Date.now();
    const row: McpSessionRow = {
      id,
      user_id: principal.userId,
      agent,
      client: JSON.stringify(body.params ?? {}),
      expires_ms: principal.expiresAt,
      idle_ms: idleMs,
      used_ms: now,
    };
    if (!(await services.store.transaction((tx) => tx.mcpSessions.open(row, MAX_MCP_SESSIONS_PER_USER, now)))) return false;
    let cached: CachedSession | undefined;
    try {
      cached = await this.attach(row, (sid) => this.deps.log.log('info', 'mcp session opened', { mcp_session: sid, user_id: principal.userId, agent }));
      await this.serve(cached, req, res, body);
    } finally {
      if (cached?.transport.sessionId === undefined) await this.forget(id);
    }
    // Its idle time counts from the end of the initialize (building the server may take a while, the first time).
    if (cached?.transport.sessionId !== undefined) this.refresh(id, principal, Date.now());
    return true;
  }

  /**
   * The session a request names, for this user: refreshed in the database
   * (its use, and its `exp` when the request's token lives longer) and
   * restored here when this daemon has not served it yet. Undefined when it
   * is not live — unknown, another user's, past its `exp`, idle or deleted:
   * all answer the same.
   */
  async find(id: string, principal: Principal): Promise<CachedSession | undefined> {
    const { services } = this.deps;
    const now = Date.now();
    // A read: a request waits for no write (a database busy with calls, or locked, still answers it).
    const row = await services.store.read((tx) => tx.mcpSessions.get(id, principal.userId, now));
    if (!row) return undefined;
    // Its use and a later exp are written now and then, not on every request, and not in the request's way.
    if (principal.expiresAt > row.expires_ms || now - row.used_ms > refreshAfterMs(row.idle_ms)) this.refresh(id, principal, now);
    let cached = this.cached.get(id);
    if (!cached) {
      let restoring = this.restoring.get(id);
      if (!restoring) {
        restoring = this.restore(row).finally(() => this.restoring.delete(id));
        this.restoring.set(id, restoring);
      }
      cached = await restoring;
    }
    services.sessions.extend(id, Math.max(row.expires_ms, principal.expiresAt));
    return cached;
  }

  /** Records a use of the session (and the token's later exp) in the database, off the request's path. */
  private refresh(id: string, principal: Principal, now: number): void {
    void this.deps.services.store.transaction((tx) => tx.mcpSessions.use(id, principal.userId, now, principal.expiresAt)).catch((err: unknown) => {
      this.deps.log.log('debug', 'mcp session use not recorded', { mcp_session: id, err: (err as Error).message });
    });
  }

  /**
   * Serves one HTTP request of the session through its SDK transport; resolves when the response (a stream too) has ended.
   * A request whose id is already in flight on the session (or repeated in the body) is refused first, 409: the SDK's
   * transport finds a response's stream by its id, so the second took the first one's stream over and the first
   * POST was never answered.
   */
  async serve(cached: CachedSession, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const ids = requestIdsOf(body);
    const clash = ids.find((id, i) => cached.ids.has(id) || ids.indexOf(id) !== i);
    if (clash !== undefined) {
      res.writeHead(409, { 'content-type': 'application/json' });
      const message = 'a request with this id is already in flight on this MCP session; use an id not in use';
      res.end(JSON.stringify({ jsonrpc: '2.0', id: Array.isArray(body) ? null : clash, error: { code: RpcErrorCode.InvalidRequest, message } }));
      return;
    }
    for (const id of ids) cached.ids.add(id);
    cached.requests += 1;
    const release = this.deps.services.sessions.hold(cached.id);
    try {
      sendEventStreamHeadersAtOnce(res);
      await cached.handle(req, res, body);
    } finally {
      for (const id of ids) cached.ids.delete(id);
      cached.requests -= 1;
      release();
    }
  }

  /** Drops this daemon's copies (the daemon stops); the sessions live on in the database for the other daemons. */
  async closeAll(): Promise<void> {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    const all = [...this.cached.values()];
    for (const c of all) this.deps.services.sessions.close(c.id);
    await Promise.allSettled(all.map((c) => c.transport.close()));
  }

  /** A cached session for a stored one: registered (its `exp` and idle end), its transport connected to its server. */
  private async attach(row: McpSessionRow, onInitialized?: (id: string) => void): Promise<CachedSession> {
    const { services, maxMessageBytes } = this.deps;
    const session = registerMcpSession(services, row.id, { userId: row.user_id, expiresAt: row.expires_ms }, row.agent, row.idle_ms);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => row.id,
      ...(onInitialized ? { onsessioninitialized: onInitialized } : {}),
      // DELETE: the session ends for every daemon (their sweeps end its streams there).
      onsessionclosed: async (sid) => {
        await this.forget(sid);
        this.deps.log.log('info', 'mcp session closed', { mcp_session: sid });
      },
    });
    transport.onclose = () => services.sessions.close(row.id);
    const cached: CachedSession = {
      id: row.id,
      transport,
      handle: toNodeHandler({ fetch: (request, opts) => transport.handleRequest(request, opts) }, { maxRequestBodySize: maxMessageBytes }),
      requests: 0,
      ids: new Set(),
    };
    services.sessions.onEnd(row.id, () => {
      if (this.cached.get(row.id) === cached) this.cached.delete(row.id);
      void transport.close().catch(() => {});
    });
    try {
      const server = await this.deps.build(session);
      await server.connect(transport);
    } catch (err) {
      services.sessions.close(row.id);
      throw err;
    }
    this.cached.set(row.id, cached);
    this.startSweeping();
    return cached;
  }

  /**
   * Restores a session another daemon opened: the SDK's own handshake
   * replayed from the stored `initialize` params, so the transport takes the
   * stored id and the server the client's capabilities and version.
   */
  private async restore(row: McpSessionRow): Promise<CachedSession> {
    const cached = await this.attach(row);
    const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const post = (message: unknown, extra: Record<string, string> = {}) =>
      cached.transport.handleRequest(new Request('http://toolgate.invalid/mcp', { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(message) }));
    try {
      const init = await post({ jsonrpc: '2.0', id: 'toolgate-restore', method: 'initialize', params: JSON.parse(row.client) as unknown });
      await init.text();
      if (!init.ok || cached.transport.sessionId !== row.id) throw new Error(`the stored initialize was refused (HTTP ${init.status})`);
      await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': row.id })).text();
      this.deps.log.log('info', 'mcp session restored', { mcp_session: row.id, user_id: row.user_id, agent: row.agent });
    } catch (err) {
      this.deps.services.sessions.close(row.id);
      throw err;
    }
    return cached;
  }

  /** Removes a session from the database and from this daemon. */
  private async forget(id: string): Promise<void> {
    this.deps.services.sessions.close(id);
    await this.deps.services.store.transaction((tx) => tx.mcpSessions.close(id));
  }

  private startSweeping(): void {
    if (this.sweeper || this.closed) return;
    this.sweeper = setInterval(() => void this.sweep(), SESSION_SWEEP_MS);
    this.sweeper.unref();
  }

  /** Ends the cached sessions the database no longer holds; marks those with a request (a stream) open here as used. */
  private async sweep(): Promise<void> {
    if (this.cached.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
      return;
    }
    const ids = [...this.cached.keys()];
    const inUse = ids.filter((id) => (this.cached.get(id)?.requests ?? 0) > 0);
    try {
      const live = new Set(await this.deps.services.store.transaction((tx) => tx.mcpSessions.live(ids, inUse, Date.now())));
      for (const id of ids) if (!live.has(id)) this.deps.services.sessions.close(id);
    } catch (err) {
      // A database outage: the requests themselves answer it; the next sweep tries again.
      this.deps.log.log('debug', 'mcp session sweep failed', { err: (err as Error).message });
    }
  }
}

/** The ids of the JSON-RPC requests in a POST body (one message or an array of them); none for anything else. */
function requestIdsOf(body: unknown): Array<string | number> {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  const ids: Array<string | number> = [];
  for (const m of messages) {
    if (m === null || typeof m !== 'object' || typeof (m as { method?: unknown }).method !== 'string') continue;
    const id = (m as { id?: unknown }).id;
    if (typeof id === 'string' || typeof id === 'number') ids.push(id);
  }
  return ids;
}

/**
 * The SDK's Node adapter (`toNodeHandler`) calls `writeHead` and leaves the headers to go with the
 * body's first bytes. A GET stream has nothing to say until an event or the SDK's keep-alive (15 s),
 * so its client waited that long for a response. An event stream's headers leave at once here.
 */
function sendEventStreamHeadersAtOnce(res: ServerResponse): void {
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  res.writeHead = ((...args: unknown[]) => {
    const written = writeHead(...args);
    if (/^text\/event-stream/i.test(String(res.getHeader('content-type') ?? contentTypeIn(args.at(-1)) ?? ''))) res.flushHeaders();
    return written;
  }) as ServerResponse['writeHead'];
}

/** The content type among `writeHead`'s headers (an object, or a flat [name, value, …] array), any case. */
function contentTypeIn(headers: unknown): unknown {
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) if (String(headers[i]).toLowerCase() === 'content-type') return headers[i + 1];
    return undefined;
  }
  if (headers === null || typeof headers !== 'object') return undefined;
  return Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
}
