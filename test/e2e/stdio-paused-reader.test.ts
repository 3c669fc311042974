/**
 * Contract section 13 on stdio: a host that stops reading the daemon's
 * stdout costs bounded memory. Past `limits.ws_high_water_bytes` of unsent
 * stdout bytes the daemon stops reading stdin (the pipe then pushes back on
 * the host) instead of building answers it cannot send; when the host reads
 * again, every request it sent is answered. Measured from outside: the
 * daemon's RSS from /proc, the host's own unsent bytes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startRaw, frameOf } from '../helpers/raw-stdio.js';
import { tempDir } from '../helpers/repo.js';
import { peakUntilIdle, rssOf } from '../helpers/proc-stats.js';
import { mintBearer } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait-for.js';

const MIB = 1024 * 1024;
const HIGH_WATER = MIB;
/**
 * Unsent bytes on the host's side of the pipe that show the daemon stopped reading: sixteen times the pipe's
 * 64 KiB. It was 2 MiB: ~15 000 requests whose 150 MB of answers, all read back at the end, were most of this
 * file's 7 s of CPU. The proof that the daemon stopped reading is its own line (awaited below) and bytes still
 * unread once it is idle — not all of them: a daemon that paused still reads a little as it pauses and resumes
 * (in CI, 161 000 of 512 KiB were left), while one that never stops reads every byte.
 */
const PUSHED_BACK = MIB;
const tick = () => new Promise((r) => setImmediate(r));

test('a host that stops reading stdout: the daemon stops reading stdin, grows by a bounded amount, and answers everything once read again', { timeout: 180_000 }, async () => {
  const config = join(tempDir(), 'small-buffers.json');
  writeFileSync(config, JSON.stringify({
    agents: { default: { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.read', 'memory.*'] } },
    limits: { ws_high_water_bytes: HIGH_WATER, max_in_flight: 16 },
  }));
  const d = startRaw(['--config', config]);
  try {
    d.frame({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocol_version: '1' } });
    d.frame({ jsonrpc: '2.0', id: 'open', method: 'session/open', params: { auth: { type: 'bearer', token: await mintBearer('slow-host') } } });
    const open = await d.waitFor((m) => m.id === 'open');
    const sessionId = (open?.result as { session_id: string }).session_id;
    const pid = d.proc.pid!;
    const base = rssOf(pid);
    d.proc.stdout.pause();
    // Send until the host's own pipe shows the daemon stopped reading (bounded count).
    let sent = 0;
    let peak = base;
    const max = 40_000;
    while (sent < max && d.proc.stdin.writableLength < PUSHED_BACK) {
      d.proc.stdin.cork();
      for (let i = 0; i < 500; i++, sent++) {
        d.proc.stdin.write(frameOf({ jsonrpc: '2.0', id: `r${sent}`, method: 'skills/read', params: { session_id: sessionId, name: 'calendar' } }));
      }
      d.proc.stdin.uncork();
      await tick();
      peak = Math.max(peak, rssOf(pid));
    }
    assert.ok(d.proc.stdin.writableLength >= PUSHED_BACK, `after ${sent} requests the daemon still reads stdin (host buffered ${d.proc.stdin.writableLength})`);
    await waitFor(() => d.stderr().includes('backpressure: stopped reading stdin'), 'the daemon to stop reading');
    const growth = Math.max(peak, await peakUntilIdle(pid)) - base;
    // Idle now: a daemon that had kept reading would have drained the host's side of the pipe; one that stopped has not.
    assert.ok(d.proc.stdin.writableLength > 0, `the daemon, once idle, had read the host's bytes after all (host buffered ${d.proc.stdin.writableLength})`);
    assert.ok(growth <= 2 * HIGH_WATER + 48 * MIB, `daemon grew by ${Math.round(growth / MIB)} MiB for a host that does not read (${sent} requests)`);
    d.proc.stdout.resume();
    await waitFor(() => d.messages.length >= sent + 2, `all ${sent} answers`, 120_000);
    const answers = d.messages.filter((m) => typeof m.id === 'string' && m.id.startsWith('r'));
    assert.equal(new Set(answers.map((m) => m.id)).size, sent, 'every request answered once');
    assert.ok(answers.every((a) => a.result !== undefined || a.error?.code === -32003), 'each answer is the skill or -32003');
    assert.ok(answers.filter((a) => a.result !== undefined).length > sent / 2, 'most were served');
    assert.match(d.stderr(), /backpressure: reading stdin again/);
  } finally {
    d.kill();
  }
});
