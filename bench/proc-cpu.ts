/**
 * CPU time of processes from /proc (Linux): a process's utime + stime, and the
 * PostgreSQL server's processes split into client backends and the rest
 * (walwriter, checkpointer, background writer, the postmaster itself…), so a
 * measured window can be charged to the daemon and to the server separately.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU fields. */
const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface Stat {
  ppid: number;
  /** utime + stime, ms. */
  cpuMs: number;
}

function stat(pid: number): Stat | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: the fields after it start past its closing parenthesis.
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), cpuMs: ((Number(f[11]) + Number(f[12])) * 1000) / TICKS };
  } catch {
    return undefined;
  }
}

/** A process's user and system CPU time, ms (undefined once it is gone). */
export function userSysMs(pid: number): { user: number; sys: number } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { user: (Number(f[11]) * 1000) / TICKS, sys: (Number(f[12]) * 1000) / TICKS };
  } catch {
    return undefined;
  }
}

/** The summed CPU time (ms) of the given processes; a process gone counts 0. */
export const cpuMs = (pids: readonly number[]): number => pids.reduce((sum, p) => sum + (stat(p)?.cpuMs ?? 0), 0);

/** The parent of a process (the postmaster, given a backend's pid). */
export const parentOf = (pid: number): number | undefined => stat(pid)?.ppid;

export interface ServerCpu {
  /** Client backends (their title names a client address): the per-call SQL work. */
  backendsMs: number;
  /** The postmaster and its auxiliary processes (WAL writer, checkpointer, …). */
  otherMs: number;
}

/**
 * The server's CPU time per process, keyed by pid, for deltas: backends that end inside a
 * window lose their share, so the bench keeps its connections open across a window.
 */
export function serverCpu(postmaster: number): Map<number, { backend: boolean; ms: number }> {
  const out = new Map<number, { backend: boolean; ms: number }>();
  const own = stat(postmaster);
  if (own) out.set(postmaster, { backend: false, ms: own.cpuMs });
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const s = stat(pid);
    if (!s || s.ppid !== postmaster) continue;
    let title: string;
    try {
      title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    // A client backend's title is "postgres: USER DB HOST(PORT) STATE"; auxiliary ones name their role.
    out.set(pid, { backend: /\(\d+\)/.test(title), ms: s.cpuMs });
  }
  return out;
}

/** The CPU spent between two `serverCpu` snapshots (processes new in `after` count from 0). */
export function serverDelta(before: ReturnType<typeof serverCpu>, after: ReturnType<typeof serverCpu>): ServerCpu {
  const d = { backendsMs: 0, otherMs: 0 };
  for (const [pid, a] of after) {
    const ms = a.ms - (before.get(pid)?.ms ?? 0);
    if (a.backend) d.backendsMs += ms;
    else d.otherMs += ms;
  }
  return d;
}
