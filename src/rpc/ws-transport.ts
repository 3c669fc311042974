/**
 * JSON-RPC over WebSocket at `/rpc`: one message per text frame, the same
 * dispatcher as stdio. Each socket is one connection with its own sessions,
 * limits, heartbeat and backpressure.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import { bindConnection } from './bind-connection.js';
import { WebSocketMessageReader, WebSocketMessageWriter } from './ws-message-stream.js';
import { Backpressure } from './backpressure.js';
import { TrackedWriter } from './tracked-writer.js';
import { requestTarget } from './request-target.js';
import { offersWebSocket } from './websocket-offer.js';
import type { ServeContext } from './serve-context.js';
import type { DispatchDeps } from './dispatcher.js';


export interface WsRpcServer {
  connectionCount(): number;
  /** Closes every socket (1001 going away). */
  closeAll(): void;
}

const RPC_PATH = '/rpc';
/** Paths an upgrade is served at: `/rpc`, and `/` for clients that connect to the bare address (pygls' start_ws). */
const RPC_PATHS = new Set([RPC_PATH, '/']);

/**
 * A request offering only upgrades this port does not speak (`h2c`…) is the plain HTTP/1.1 request it also is
 * (RFC 9110 §7.8: a server may ignore `Upgrade`). From Node 24.9 on the server is told so at its creation
 * (`shouldUpgradeCallback`, http-server.ts) and such a request never comes here. Before, Node has already
 * taken the socket from the HTTP server, so
 * the request's head is written back in front of its body, without the upgrade offer, and the socket is handed
 * to the server again as a connection (its documented way to inject one): the same routes, guard and body
 * reading as any request.
 */
function serveAsPlainRequest(http: Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const hopByHop = new Set(['upgrade', 'http2-settings']);
  const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/${req.httpVersion}`];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    const lower = name.toLowerCase();
    if (hopByHop.has(lower)) continue;
    if (lower === 'connection') {
      const kept = req.rawHeaders[i + 1]!.split(',').map((t) => t.trim()).filter((t) => t !== '' && !hopByHop.has(t.toLowerCase()));
      if (kept.length > 0) lines.push(`${name}: ${kept.join(', ')}`);
      continue;
    }
    lines.push(`${name}: ${req.rawHeaders[i + 1]!}`);
  }
  // Header text is read as latin1 by Node: written back the same way, every byte is the client's.
  socket.unshift(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]));
  http.emit('connection', socket);
}

export function attachWebSocketRpc(ctx: ServeContext<DispatchDeps>, http: Server): WsRpcServer {
  const { services, limits, guard } = ctx;
  const opts = { track: ctx.track, accepting: ctx.accepting, writes: ctx.writes };
  // ws closes a connection past maxPayload; keep that hard cap well above our
  // soft limit so an oversized message gets an error instead of a hang-up.
  const wss = new WebSocketServer({ noServer: true, maxPayload: Math.max(limits.maxMessageBytes * 4, 1024 * 1024) });
  const sockets = new Set<WebSocket>();

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node hands every request with an `Upgrade` header here (`h2c`: `curl --http2` sends it on every request).
    if (!offersWebSocket(req)) {
      serveAsPlainRequest(http, req, socket, head);
      return;
    }
    // Read as every route reads it (request-target.ts: never throws; absolute-form is its path).
    const path = requestTarget(req.url)?.pathname;
    // DNS rebinding / cross-site WebSocket: refused before the handshake completes (http-guard.ts).
    const refused = guard(req);
    if (refused) {
      socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${JSON.stringify({ error: refused })}`);
      return;
    }
    if (!RPC_PATHS.has(path ?? '') || !opts.accepting()) {
      socket.end(`HTTP/1.1 ${opts.accepting() ? '404 Not Found' : '503 Service Unavailable'}\r\nConnection: close\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, req));
  });

  function onConnection(ws: WebSocket, req: IncomingMessage): void {
    sockets.add(ws);
    const id = `ws_${randomUUID().slice(0, 8)}`;
    const log = services.log.child({ connection: id });
    log.log('info', 'connection opened', { remote: req.socket.remoteAddress });

    const flow = new Backpressure(limits.highWaterBytes, limits.maxBufferedBytes);
    const onBuffered = (buffered: number) => {
      switch (flow.update(buffered)) {
        case 'drop':
          log.log('warn', 'dropping a connection that does not read its messages', { buffered });
          ws.terminate();
          break;
        case 'pause':
          log.log('info', 'backpressure: stopped reading a slow peer', { buffered });
          reader.hold(true);
          break;
        case 'resume':
          log.log('info', 'backpressure: reading again', { buffered });
          reader.hold(false);
          break;
      }
    };
    // Room for every request in flight plus as many refused past the limit (-32003) before reading stops.
    const maxUnanswered = 2 * limits.maxInFlight + 16;
    const reader = new WebSocketMessageReader(
      ws,
      { maxMessageBytes: limits.maxMessageBytes, maxUnanswered },
      // debug: a peer that sends junk must not also fill the daemon's log, one line per frame.
      (reason) => log.log('debug', 'frame rejected', { reason }),
      onBuffered,
    );
    const rpc = reader.connect(new TrackedWriter(new WebSocketMessageWriter(ws, { onBuffered, onResponse: () => reader.answered() }), opts.writes));
    const bound = bindConnection(services, rpc, {
      id,
      transport: 'ws',
      trusted: false,
      maxInFlight: limits.maxInFlight,
      ...opts,
      // A request read before the peer stopped reading waits: its answer is built only once there is room.
      writable: () => flow.writable(),
    });
    rpc.onError(([err]) => log.log('warn', 'connection error', { err: err.message }));
    // LSP's `exit` ends this client's connection; the daemon serves other clients on.
    rpc.onNotification((method) => {
      if (method === 'exit') ws.close(1000, bound.state.shutdownRequested ? 'exit' : 'exit without shutdown');
    });

    let alive = true;
    ws.on('pong', () => (alive = true));
    const heartbeat = setInterval(() => {
      if (!alive) {
        log.log('info', 'peer missed a heartbeat; dropping it');
        ws.terminate();
        return;
      }
      alive = false;
      ws.ping();
    }, limits.pingIntervalMs);
    heartbeat.unref();

    ws.on('close', (code: number) => {
      clearInterval(heartbeat);
      flow.end();
      sockets.delete(ws);
      bound.release();
      rpc.dispose();
      log.log('info', 'connection closed', { code, in_flight: bound.inFlight() });
    });
    rpc.listen();
  }

  return {
    connectionCount: () => sockets.size,
    closeAll() {
      for (const ws of sockets) ws.close(1001, 'daemon shutting down');
      wss.close();
    },
  };
}
