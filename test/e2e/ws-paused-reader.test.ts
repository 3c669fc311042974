/**
 * Contract section 13: a WebSocket peer that stops reading costs bounded
 * memory. The daemon stops reading its requests (TCP then pushes back on the
 * peer) instead of building answers it cannot send; when the peer reads
 * again, every request it sent is answered. Measured from outside: the
 * daemon's RSS from /proc, the peer's own unsent bytes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startHost, type Host } from '../helpers/host.js';
import { tempDir } from '../helpers/repo.js';
import { peakUntilIdle, rssOf } from '../helpers/proc-stats.js';
import { mintBearer } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait-for.js';

const MIB = 1024 * 1024;
const tick = () => new Promise((r) => setImmediate(r));

async function rawPeer(host: Host) {
  const ws = new WebSocket(`ws://127.0.0.1:${host.port}/rpc`);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const answered = new Map<string, { result?: unknown; error?: { code: number } }>();
  const waiters = new Map<string, () => void>();
  ws.on('message', (data: Buffer) => {
    const m = JSON.parse(data.toString('utf8')) as { id: string; result?: unknown; error?: { code: number } };
    answered.set(m.id, m);
    waiters.get(m.id)?.();
  });
  const call = (id: string, method: string, params: unknown) =>
    new Promise<{ result?: unknown }>((resolve) => {
      waiters.set(id, () => resolve(answered.get(id)!));
      ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  await call('init', 'initialize', { protocol_version: '1' });
  const open = await call('open', 'session/open', { auth: { type: 'bearer', token: await mintBearer('slow-reader') } });
  const sessionId = (open.result as { session_id: string }).session_id;
  const socket = (ws as unknown as { _socket: { pause(): void; resume(): void; cork(): void; uncork(): void } })._socket;
  return { ws, answered, sessionId, call, stopReading: () => socket.pause(), readAgain: () => socket.resume(), cork: () => socket.cork(), uncork: () => socket.uncork() };
}

interface FloodOptions {
  /** Stops the flood early once true (`sent` so far). */
  enough?: (sent: number) => boolean;
  /** Awaited after each batch (else one turn of the event loop). */
  pace?: () => Promise<unknown>;
  /** Requests per batch (500). */
  batch?: number;
}

/**
 * Sends skills/read until the peer's own buffer shows the daemon stopped reading, or `enough(sent)` says so
 * (bounded count); the daemon's peak RSS meanwhile.
 */
async function flood(host: Host, peer: Awaited<ReturnType<typeof rawPeer>>, max: number, opts: FloodOptions = {}) {
  let sent = 0;
  let peak = rssOf(host.proc.pid!);
  while (sent < max && peer.ws.bufferedAmount < 2 * MIB && !opts.enough?.(sent)) {
    // Unpaced, one write for the batch, not one system call a frame (that was 1.6 s of this file's CPU): the
    // daemon reads the same bytes. A paced flood keeps its frames apart: it follows the daemon's own pace.
    if (!opts.pace) peer.cork();
    for (let i = 0; i < (opts.batch ?? 500); i++, sent++) {
      peer.ws.send(JSON.stringify({ jsonrpc: '2.0', id: `r${sent}`, method: 'skills/read', params: { session_id: peer.sessionId, name: 'calendar' } }));
    }
    if (!opts.pace) peer.uncork();
    await (opts.pace?.() ?? tick());
    peak = Math.max(peak, rssOf(host.proc.pid!));
  }
  return { sent, peak };
}

test('a peer that sends skills/read without reading grows the daemon by at most 2 × ws_max_buffered_bytes, and TCP pushes back', { timeout: 120_000 }, async () => {
  const host = await startHost({ transport: 'ws' });
  try {
    const peer = await rawPeer(host);
    const base = rssOf(host.proc.pid!);
    peer.stopReading();
    const { sent, peak } = await flood(host, peer, 200_000);
    // The daemon stopped reading: the peer's sends pile up on its own side.
    assert.ok(peer.ws.bufferedAmount >= 2 * MIB, `after ${sent} requests the daemon still reads (peer buffered ${peer.ws.bufferedAmount})`);
    await waitFor(() => host.stderr().includes('backpressure: stopped reading a slow peer'), 'the daemon to stop reading the slow peer', 60_000);
    // Whatever the daemon read before it stopped is worked off now: follow its RSS until it is idle.
    const settledPeak = await peakUntilIdle(host.proc.pid!);
    const growth = Math.max(peak, settledPeak) - base;
    assert.ok(growth <= 2 * 64 * MIB, `daemon grew by ${Math.round(growth / MIB)} MiB for one paused peer (${sent} requests)`);
    peer.ws.terminate();
  } finally {
    await host.stop();
  }
});

test('when the paused peer reads again, every request it sent is answered, in full', { timeout: 120_000 }, async () => {
  const config = join(tempDir(), 'small-buffers.json');
  writeFileSync(config, JSON.stringify({
    agents: { default: { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.read', 'memory.*'] } },
    limits: { ws_high_water_bytes: 256 * 1024, ws_max_buffered_bytes: 64 * MIB, max_in_flight: 16 },
  }));
  const host = await startHost({ transport: 'ws', args: ['--config', config] });
  try {
    const peer = await rawPeer(host);
    peer.stopReading();
    const paused = () => host.stderr().includes('backpressure: stopped reading a slow peer');
    // Enough once the daemon has stopped reading and 2000 more requests wait behind it, unread: answering
    // every request of a full buffer (up to 20 000 of ~10 kB answers) took most of this file's time. Unpaced,
    // the peer sent all 20 000 before the daemon had read enough to stop; a round trip on another
    // connection after each batch of 100 keeps the flood near the daemon's own pace.
    const probe = await rawPeer(host);
    let probes = 0;
    let pausedAt: number | undefined;
    const { sent } = await flood(host, peer, 20_000, {
      enough: (n) => {
        if (pausedAt === undefined && paused()) pausedAt = n;
        return pausedAt !== undefined && n - pausedAt >= 2000;
      },
      pace: () => probe.call(`p${probes++}`, 'skills/list', { session_id: probe.sessionId }),
      batch: 100,
    });
    probe.ws.close();
    await waitFor(paused, 'the daemon to stop reading the slow peer', 60_000);
    peer.readAgain();
    await waitFor(() => peer.answered.size >= sent + 2, () => `every answer, got ${peer.answered.size} of ${sent + 2}`, 60_000);
    const answers = [...peer.answered.values()];
    assert.ok(answers.every((a) => a.result !== undefined || a.error?.code === -32003), 'each answer is the skill or -32003');
    assert.ok(answers.filter((a) => a.result !== undefined).length > sent / 2, 'most were served once the peer read again');
    assert.match(host.stderr(), /backpressure: reading again/);
    peer.ws.close();
  } finally {
    await host.stop();
  }
});

test('a peer that sends frames the daemon refuses, and never reads, is paused like any other', { timeout: 120_000 }, async () => {
  const config = join(tempDir(), 'small-buffers.json');
  writeFileSync(config, JSON.stringify({
    agents: { default: { enabled_skills: ['calendar'], allowed_actions: ['calendar.*'] } },
    limits: { ws_high_water_bytes: 256 * 1024, ws_max_buffered_bytes: 64 * MIB },
  }));
  const host = await startHost({ transport: 'ws', args: ['--config', config] });
  try {
    const peer = await rawPeer(host);
    peer.stopReading();
    const paused = () => host.stderr().includes('backpressure: stopped reading a slow peer');
    // "x" is no JSON: a -32700 of ~70 bytes answers each 7-byte frame. Without backpressure on those answers the
    // daemon reads every frame and queues the answers unsent; with it, it stops reading that peer.
    let sent = 0;
    while (sent < 300_000 && !paused() && peer.ws.readyState === WebSocket.OPEN) {
      peer.cork();
      for (let i = 0; i < 1000; i++, sent++) peer.ws.send('x');
      peer.uncork();
      await tick();
    }
    await waitFor(paused, () => `the daemon to stop reading: after ${sent} refused frames it still reads them`, 30_000);
    peer.ws.terminate();
  } finally {
    await host.stop();
  }
});
