/**
 * What a daemon service needs of the client a call came from — nothing of
 * how it is connected. Sessions and subscriptions are bound to `id`, a
 * trusted peer may open automation sessions, and `notify` sends it a
 * notification (`tool/result`). The transports' connections (src/rpc/connection.ts)
 * are peers; the daemon never imports them, so the dependency points one way.
 */
export interface Peer {
  /** Unique per live connection (stdio, one WebSocket, one MCP call). */
  readonly id: string;
  /** Trusted connections may open automation sessions (stdio always is). */
  trusted: boolean;
  notify(method: string, params: unknown): void;
}
