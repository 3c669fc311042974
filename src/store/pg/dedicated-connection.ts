/**
 * A connection the store keeps for itself outside the pool — the one that
 * LISTENs for thread events, the one that holds call marks — and keeps
 * alive: when the server drops it (a restart, `pg_terminate_backend`, a
 * network cut) it reconnects with backoff (100 ms doubling to 5 s), runs its
 * `setup` again (LISTEN, re-taking the marks), and tells its owner.
 *
 * An outage is logged once: `warn` when the connection is lost (or the
 * first attempt fails), `info` when it is back; the attempts in between log
 * at `debug`. Every `'error'` the driver emits is handled here, so a dropped
 * connection never becomes an unhandled error event.
 */
import pg from 'pg';
import { clientConfig, describePgUrl } from './connect.js';

export interface ConnectionLog {
  log(level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>): void;
}

export interface DedicatedConnectionOptions {
  url: string;
  log: ConnectionLog;
  /** Log lines: `lost the database connection that ${lost}; reconnecting`. */
  lost: string;
  /** Log line when back: `reconnected to the database ${back}`. */
  back: string;
  /** Runs on every new connection before it counts as up (LISTEN, re-taking locks). */
  setup(client: pg.Client): Promise<void>;
  /** After a reconnect that ended an outage (not after the first connect). */
  onReconnect?(): void;
}

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;

export class DedicatedConnection {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  /** An outage is under way (and was logged). */
  private down = false;
  private closed = false;

  constructor(private readonly opts: DedicatedConnectionOptions) {}

  /** The live connection, or undefined while connecting or in an outage. */
  get current(): pg.Client | undefined {
    return this.client;
  }

  /**
   * Connects (once; concurrent callers share the attempt) and resolves with
   * the live connection. A failed attempt rejects, and the connection keeps
   * trying in the background with backoff.
   */
  open(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    if (this.connecting) return this.connecting;
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    if (this.retryTimer) return Promise.reject(new Error(`reconnecting (${this.opts.lost})`));
    const attempt = this.connect();
    this.connecting = attempt;
    attempt.then(
      () => {
        this.connecting = undefined;
      },
      (err: Error) => {
        this.connecting = undefined;
        this.failed(err);
      },
    );
    return attempt;
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client(clientConfig(this.opts.url));
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await this.opts.setup(client);
    } catch (err) {
      client.end().catch(() => {});
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      throw new Error('the store is closed');
    }
    this.client = client;
    this.retryMs = FIRST_RETRY_MS;
    if (this.down) {
      this.down = false;
      this.opts.log.log('info', `reconnected to the database ${this.opts.back}`, { db: describePgUrl(this.opts.url) });
      this.opts.onReconnect?.();
    }
    return client;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    client.end().catch(() => {});
    this.startOutage();
    this.scheduleReconnect();
  }

  private failed(err: Error): void {
    if (this.closed) return;
    if (this.down) this.opts.log.log('debug', `reconnecting to the database failed; retrying`, { error: err.message, retry_ms: this.retryMs });
    else this.startOutage(err);
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    this.scheduleReconnect();
  }

  private startOutage(err?: Error): void {
    if (this.down) return;
    this.down = true;
    this.opts.log.log('warn', `lost the database connection that ${this.opts.lost}; reconnecting`, {
      db: describePgUrl(this.opts.url),
      ...(err ? { error: err.message } : {}),
    });
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.open().catch(() => {}); // a failure schedules the next attempt
    }, this.retryMs);
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const client = this.client ?? (await this.connecting?.catch(() => undefined));
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
