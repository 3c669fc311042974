/**
 * Entry (g): 50 WebSocket clients × 100 calls against one daemon
 * (`serve --ws`, in-process executor): calls/s, p50/p99, the daemon's idle RSS
 * and its peak RSS under the load. A minimal JSON-RPC client (one message per
 * text frame, as /rpc speaks) so that nothing of toolgate is imported.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import WebSocket from 'ws';
import { median, p99 } from './stats.js';
import { childEnv, memoryOf, tempDir, TOOLGATE_BIN } from './env.js';
import { calendarInput } from './anchors/calendar-input.js';
import { mintBearer, toolgateEnv, writeConfig, type Synchronous } from './targets/toolgate.js';

export interface WsResult {
  clients: number;
  callsPerClient: number;
  rate: number;
  p50: number;
  p99: number;
  idleRss: number;
  peakRss: number;
  /** Highest RSS sampled while the load ran (VmHWM also counts start-up). */
  loadRss: number;
}

class WsClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
      if (typeof msg.id !== 'number') return; // a notification
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.error) p.reject(new Error(msg.error.message));
      else p.resolve(msg.result);
    });
  }

  static open(url: string): Promise<WsClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.once('open', () => resolve(new WsClient(ws)));
      ws.once('error', reject);
    });
  }

  request<T>(method: string, params: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  close(): void {
    this.ws.close();
  }
}

export async function runWsLoad(opts: { synchronous: Synchronous; clients: number; callsPerClient: number; log: (l: string) => void }): Promise<WsResult> {
  const dir = tempDir();
  const config = writeConfig(dir, opts.synchronous, { limits: { max_in_flight: 64 } });
  const proc = spawn(process.execPath, [TOOLGATE_BIN, 'serve', '--ws', '--port', '0', '--executor', 'inprocess', '--db', join(dir, 'ws.db'), '--config', config], {
    env: childEnv(toolgateEnv(dir)),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let buf = '';
      const timer = setTimeout(() => reject(new Error(`toolgate --ws did not listen: ${buf.slice(-1000)}`)), 30_000);
      proc.stderr.on('data', (c: Buffer) => {
        buf += c.toString('utf8');
        const m = /\{"listening":\{[^}]*"port":(\d+)/.exec(buf);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
        if (buf.length > 1 << 20) buf = buf.slice(-4096);
      });
      proc.once('exit', (code) => reject(new Error(`toolgate --ws exited ${code}: ${buf.slice(-1000)}`)));
    });
    const url = `ws://127.0.0.1:${port}/rpc`;
    const clients = await Promise.all(
      Array.from({ length: opts.clients }, async (_, k) => {
        const c = await WsClient.open(url);
        await c.request('initialize', { protocol_version: '1' });
        const { session_id } = await c.request<{ session_id: string }>('session/open', { auth: { type: 'bearer', token: await mintBearer(`ws-user-${k}`) } });
        return { c, session_id, k };
      }),
    );
    const call = async (cl: (typeof clients)[number], i: number) => {
      const res = await cl.c.request<{ status: string }>('tool/invoke', {
        session_id: cl.session_id, thread_id: `ws-${cl.k}`, tool_call_id: `w${i}`,
        args: { module: 'calendar', method: 'create', input: calendarInput(i) },
      });
      if (res.status !== 'success') throw new Error(`ws call failed: ${JSON.stringify(res).slice(0, 300)}`);
    };
    for (let i = 0; i < 5; i++) await call(clients[0]!, -1 - i); // warm-up
    await new Promise((r) => setTimeout(r, 1000));
    const idleRss = memoryOf(proc.pid!).rss;

    let loadRss = 0;
    const sampler = setInterval(() => (loadRss = Math.max(loadRss, memoryOf(proc.pid!).rss)), 50);
    const latencies: number[] = [];
    const started = performance.now();
    await Promise.all(
      clients.map(async (cl) => {
        for (let i = 0; i < opts.callsPerClient; i++) {
          const t = performance.now();
          await call(cl, i);
          latencies.push(performance.now() - t);
        }
      }),
    );
    const wall = performance.now() - started;
    clearInterval(sampler);
    const mem = memoryOf(proc.pid!);
    for (const cl of clients) cl.c.close();
    return {
      clients: opts.clients,
      callsPerClient: opts.callsPerClient,
      rate: (latencies.length / wall) * 1000,
      p50: median(latencies),
      p99: p99(latencies),
      idleRss,
      peakRss: mem.peak,
      loadRss: Math.max(loadRss, mem.rss),
    };
  } finally {
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
