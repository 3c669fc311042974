/**
 * Where a toolgate call's time goes: the in-process daemon is run under
 * `node --cpu-prof` for a few hundred calls and its profile is summed up by
 * self time — per area (SQLite, crypto, zod, transport, logging, …) and per
 * function — in µs per call.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { concurrent, sequential } from './load.js';
import { tempDir } from './env.js';
import { startToolgateStdio, type Synchronous } from './targets/toolgate.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface ProfileSummary {
  calls: number;
  /** Busy (non-idle) main-thread time per call, µs. */
  busyPerCall: number;
  areas: Array<{ area: string; usPerCall: number; share: number }>;
  functions: Array<{ fn: string; usPerCall: number }>;
}

/** The area a frame belongs to: by package, by our source folder, or by Node's internals. */
function areaOf(url: string, fn: string): string {
  if (url === '') {
    if (fn === '(garbage collector)') return 'GC';
    if (fn === '(idle)' || fn === '(program)' || fn === '(root)') return fn;
    return 'native (SQLite statements, crypto, writes)';
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const ours = /dist\/src\/([^/]+)\/([^/.]+)/.exec(url);
  if (ours) return `toolgate ${ours[1]}/${ours[2]}`;
  if (url.startsWith('node:')) {
    if (/stream|net|pipe|tty/.test(url)) return 'node streams/net';
    if (/crypto/.test(url)) return 'node crypto';
    return 'node internals';
  }
  return url.replace(/.*\//, '');
}

/** `top`: how many areas and functions to keep (the rest are left out of the lists, not of `busyPerCall`). */
export function summarize(file: string, calls: number, top = { areas: 14, functions: 15 }): ProfileSummary {
  const p = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  // Leave out start-up: the main module's first run and every module load.
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const startup = new Map<number, boolean>();
  const isStartup = (id: number): boolean => {
    let v = startup.get(id);
    if (v === undefined) {
      const url = byId.get(id)!.callFrame.url;
      v = /node:internal\/(main\/run_main_module|modules\/(run_main|esm\/|cjs\/loader))/.test(url) || (parent.has(id) && isStartup(parent.get(id)!));
      startup.set(id, v);
    }
    return v;
  };
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
  const areas = new Map<string, number>();
  const fns = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    if (isStartup(id)) continue;
    const n = byId.get(id)!;
    const area = areaOf(n.callFrame.url, n.callFrame.functionName);
    if (area === '(idle)') continue;
    busy += us;
    areas.set(area, (areas.get(area) ?? 0) + us);
    const fn = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/.*node_modules\//, '').replace(/.*dist\//, '')}:${n.callFrame.lineNumber + 1}`;
    fns.set(fn, (fns.get(fn) ?? 0) + us);
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return {
    calls,
    busyPerCall: busy / calls,
    areas: sorted(areas).slice(0, top.areas).map(([area, us]) => ({ area, usPerCall: us / calls, share: us / busy })),
    functions: sorted(fns).slice(0, top.functions).map(([fn, us]) => ({ fn, usPerCall: us / calls })),
  };
}

/** Profiles the in-process daemon over `seq` sequential calls and `conc` at concurrency 8. */
/** `db`: a PostgreSQL URL to profile that engine instead (default: a fresh SQLite file). */
export async function profileInprocess(opts: { synchronous: Synchronous; seq: number; conc: number; db?: string }): Promise<ProfileSummary> {
  const dir = tempDir();
  const profDir = join(dir, 'prof');
  const tg = await startToolgateStdio({
    executor: 'inprocess', dbFile: opts.db ?? join(dir, 'p.db'), dataDir: dir, synchronous: opts.synchronous,
    nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profDir],
    unbundled: true,
  });
  await sequential(tg, 50);
  await sequential(tg, opts.seq);
  await concurrent(tg, opts.conc, 8);
  await tg.stop();
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('no CPU profile was written');
  return summarize(join(profDir, file), 50 + opts.seq + opts.conc);
}
