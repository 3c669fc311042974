/** A spawned daemon's memory and CPU, read from /proc (Linux), for the paused-reader tests. */
import { readFileSync } from 'node:fs';

export const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

/** CPU ticks the process has used (/proc/PID/stat utime + stime). */
export function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** The highest RSS seen until the process used no CPU over three samples in a row (at most 600 samples). */
export async function peakUntilIdle(pid: number): Promise<number> {
  let peak = rssOf(pid);
  let last = cpuTicks(pid);
  for (let still = 0, n = 0; still < 3 && n < 600; n++) {
    await new Promise((r) => setTimeout(r, 100));
    peak = Math.max(peak, rssOf(pid));
    const now = cpuTicks(pid);
    still = now === last ? still + 1 : 0;
    last = now;
  }
  return peak;
}
