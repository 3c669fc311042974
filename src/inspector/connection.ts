/**
 * The inspector's link to the daemon: one WebSocket to `/rpc` at a time,
 * `initialize`d before anything else, reconnected with backoff when it drops.
 * Sessions live on a connection (the daemon forgets them when it closes), so
 * the other parts hear `ready` for every new connection and `lost` when it
 * goes, and reopen what they need.
 */
import { byId } from './dom.js';
import { CONNECTION_CLOSED, REQUEST_TIMEOUT, RpcClient, RpcError, describeError } from './rpc-client.js';
import type { InitializeResult } from './wire.js';

export interface ConnectionEvents {
  /** A connection is open and initialized. */
  ready(rpc: RpcClient): void | Promise<void>;
  /** The connection closed (a new one is being made). */
  lost(): void;
}

type State = 'connecting' | 'connected' | 'disconnected' | 'error';

export class Connection {
  /** The open, initialized connection, or null. */
  rpc: RpcClient | null = null;
  private reconnectDelay = 500;
  private readonly status = byId('connection-status');
  private readonly statusText = byId('connection-text');

  constructor(
    private readonly url: string,
    private readonly events: ConnectionEvents,
  ) {}

  /** The `/rpc` endpoint of the daemon that served this page. */
  static urlOf(loc: Location): string {
    return `${loc.protocol === 'https:' ? 'wss' : 'ws'}://${loc.host}/rpc`;
  }

  async connect(): Promise<void> {
    this.show('connecting', 'Connecting…');
    let rpc: RpcClient | null = null;
    try {
      rpc = await RpcClient.connect(this.url);
      const opened = rpc;
      opened.onClose(() => this.onClosed(opened));
      const init = await opened.request<InitializeResult>(
        'initialize',
        { protocol_version: '1', client_info: { name: 'toolgate-inspector', version: '1' } },
        { timeoutMs: 15_000 },
      );
      this.rpc = opened;
      this.reconnectDelay = 500;
      const server = init?.server_info;
      this.show('connected', server ? `Connected to ${server.name} ${server.version}` : 'Connected');
      await this.events.ready(opened);
    } catch (err) {
      const refused = err instanceof RpcError && err.code !== CONNECTION_CLOSED && err.code !== REQUEST_TIMEOUT;
      if (refused && rpc && !rpc.closed) {
        // The daemon answered initialize with an error: reconnecting would not help.
        this.rpc = null;
        rpc.close();
        this.show('error', `Initialize failed: ${describeError(err)}`);
        return;
      }
      if (this.rpc === rpc) this.rpc = null;
      rpc?.close();
      this.scheduleReconnect('Cannot reach the daemon');
    }
  }

  /**
   * Closes this connection and opens a fresh one: the daemon drops the
   * connection's sessions and subscriptions with it (sign-out).
   */
  restart(): void {
    const rpc = this.rpc;
    this.rpc = null;
    rpc?.close();
    if (!rpc) return;
    this.reconnectDelay = 500;
    void this.connect();
  }

  private onClosed(rpc: RpcClient): void {
    if (this.rpc !== rpc) return; // replaced (restart) or never initialized
    this.rpc = null;
    this.events.lost();
    this.scheduleReconnect('Disconnected');
  }

  private scheduleReconnect(reason: string): void {
    const delay = this.reconnectDelay;
    this.reconnectDelay = Math.min(delay * 2, 15_000);
    this.show('disconnected', `${reason} — retrying in ${Math.round(delay / 1000) || 1} s`);
    setTimeout(() => void this.connect(), delay);
  }

  private show(state: State, text: string): void {
    this.status.dataset['state'] = state;
    this.statusText.textContent = text;
  }
}
