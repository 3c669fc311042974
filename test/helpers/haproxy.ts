/**
 * A throwaway HAProxy (Debian's `haproxy`, as `.ci/run` installs it) in
 * front of daemons: plain round-robin, no affinity of any kind (no cookie,
 * no stick table, no `prefer-last-server`), so consecutive requests of one
 * client — even on one kept-alive connection — reach different daemons. Its
 * config is written to a temporary folder and it runs in the foreground
 * (`-db`) on a free loopback port; `stop()` ends it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './doc-run.js';
import { waitFor } from './wait-for.js';

/** Where Debian's haproxy is, if it is installed. */
export const HAPROXY_BIN: string | undefined = ['/usr/sbin/haproxy', '/usr/bin/haproxy', ...(process.env.PATH ?? '').split(':').filter(Boolean).map((d) => join(d, 'haproxy'))].find((p) =>
  existsSync(p),
);

/** `{ skip }` for suites that run behind a balancer of their own. */
export const needsHaproxy = HAPROXY_BIN ? {} : { skip: 'haproxy is not installed (apt-get install haproxy)' };

export interface Balancer {
  port: number;
  url: string;
  /** The config it runs with (what docs/operations.md shows). */
  config: string;
  /** Output so far (alerts, warnings). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * The configuration of docs/operations.md ("Many daemons behind a load
 * balancer"), with the test's ports. `/readyz` is the health check, so a
 * draining or dead daemon leaves the rotation; a request whose connection
 * is refused is retried on another daemon (`redispatch`); nothing that
 * reached a daemon is ever sent again by the balancer.
 */
export function haproxyConfig(port: number, daemons: readonly number[]): string {
  return [
    'global',
    '  maxconn 1024',
    '',
    'defaults',
    '  mode http',
    '  option redispatch',
    '  retries 3',
    '  timeout connect 2s',
    '  timeout client 1h',
    '  timeout server 1h',
    // WebSocket and SSE streams stay open as long as their client keeps them.
    '  timeout tunnel 1h',
    '',
    'frontend toolgate',
    `  bind 127.0.0.1:${port}`,
    '  default_backend daemons',
    '',
    'backend daemons',
    '  balance roundrobin',
    '  option httpchk',
    // The daemons check Host (http.allowed_hosts): the check names one they accept.
    '  http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host 127.0.0.1',
    '  http-check expect status 200',
    ...daemons.map((p, i) => `  server d${i + 1} 127.0.0.1:${p} check inter 500ms fall 2 rise 1`),
    '',
  ].join('\n');
}

/** `port`: chosen beforehand when the daemons must know it (their `http.public_url`); else a free one. */
export async function startHaproxy(daemons: readonly number[], port?: number): Promise<Balancer> {
  if (!HAPROXY_BIN) throw new Error('haproxy is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-haproxy-'));
  port ??= await freePort();
  const config = haproxyConfig(port, daemons);
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  let output = '';
  const proc: ChildProcess = spawn(HAPROXY_BIN, ['-f', file, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.on('data', (c: Buffer) => (output += c.toString('utf8')));
  proc.stderr!.on('data', (c: Buffer) => (output += c.toString('utf8')));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  try {
    // Up once it answers through to every daemon: a round of requests, all ready.
    await waitFor(
      async () => {
        if (proc.exitCode !== null) throw new Error(`haproxy exited:\n${output}`);
        for (let i = 0; i < 2 * daemons.length; i++) if ((await fetch(`${url}/readyz`)).status !== 200) return false;
        return true;
      },
      () => `haproxy to answer /readyz:\n${output}`,
    );
  } catch (err) {
    proc.kill('SIGKILL');
    throw err;
  }
  return {
    port,
    url,
    config,
    output: () => output,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}
