/**
 * What every transport of one `serve` shares, as one object: the services,
 * the transport limits, whether calls are still accepted, how a call is
 * tracked for shutdown, the writes shutdown waits for, and the Host/Origin
 * guard of the HTTP port. `serve` builds it once; stdio, WebSocket, both MCP
 * transports, the AG-UI stream and the HTTP server all take it, each as a
 * `ServeContext<S>` naming the part `S` of the services it reads (tests
 * build one with `serveContext(services, …)`).
 */
import { httpGuard, type HttpGuard, type HttpGuardConfig } from './http-guard.js';
import { PendingWrites } from './tracked-writer.js';

/** The limits a transport enforces on its peers (src/app/serve.ts's `Limits` carries them, with the daemon's own). */
export interface TransportLimits {
  /** Longest message: stdio body, WebSocket frame, MCP line or HTTP body. */
  maxMessageBytes: number;
  /** Requests running at once per connection (per user for sessionless MCP). */
  maxInFlight: number;
  /** WebSocket heartbeat; a peer that misses one pong is dropped. */
  pingIntervalMs: number;
  /** WebSocket: unsent bytes past which a slow peer's requests are no longer read. */
  highWaterBytes: number;
  /** WebSocket and AG-UI: unsent bytes past which a slow peer is dropped. */
  maxBufferedBytes: number;
}

/** `S`: what of the services the transport taking it reads (`serve` gives them all, src/rpc/services.ts). */
export interface ServeContext<S> {
  services: S;
  limits: TransportLimits;
  /** False once the daemon stops taking calls (shutdown). */
  accepting(): boolean;
  /** Registers a call with the daemon so shutdown can wait for it; returns the same promise. */
  track<T>(work: Promise<T>): Promise<T>;
  /** Responses still being written: shutdown lets them leave before the transports close. */
  writes: PendingWrites;
  /** `http.allowed_hosts` / `http.allowed_origins`, checked on every HTTP request and upgrade. */
  guard: HttpGuard;
}

export const DEFAULT_TRANSPORT_LIMITS: TransportLimits = {
  maxMessageBytes: 1024 * 1024,
  maxInFlight: 256,
  pingIntervalMs: 30_000,
  highWaterBytes: 8 * 1024 * 1024,
  maxBufferedBytes: 64 * 1024 * 1024,
};

/** A context with the defaults for whatever is not given (always accepting, untracked calls, the config's guard). */
export function serveContext<S extends { config?: { http?: HttpGuardConfig } }>(
  services: S,
  parts: Partial<Omit<ServeContext<S>, 'services' | 'limits'>> & { limits?: Partial<TransportLimits> } = {},
): ServeContext<S> {
  return {
    services,
    limits: { ...DEFAULT_TRANSPORT_LIMITS, ...parts.limits },
    accepting: parts.accepting ?? (() => true),
    track: parts.track ?? (<T>(work: Promise<T>) => work),
    writes: parts.writes ?? new PendingWrites(),
    guard: parts.guard ?? httpGuard(services.config?.http),
  };
}
