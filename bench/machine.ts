/** A description of the machine a bench ran on, for RESULTS.md. */
import { cpus, totalmem, loadavg } from 'node:os';

export interface Machine {
  cpu: string;
  cores: number;
  memory: string;
  node: string;
  date: string;
  load: string;
}

export function describeMachine(): Machine {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memory: `${(totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    node: process.version,
    date: new Date().toISOString(),
    load: loadavg().map((l) => l.toFixed(2)).join(' / '),
  };
}
