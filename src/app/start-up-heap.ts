/**
 * The daemon's young generation through start-up. Loading the daemon's ~250
 * modules allocates objects that nearly all survive, and V8 answers a high
 * survival rate by doubling the young generation at each scavenge, up to its
 * 16 MB maximum: measured, 11 MB of resident memory at idle that start-up
 * alone asked for (bench/RESULTS.md, idle RSS). So the launcher holds the
 * growth factor at 1 while the modules load, and `serve` gives V8 its own
 * default back once the daemon is serving: under load the young generation
 * grows as V8 sees fit, exactly as before.
 *
 * A V8 flag changed at run time; this one is read at each growth decision
 * only. Left alone when the user set a semi-space flag of their own.
 */
import { setFlagsFromString } from 'node:v8';

/** V8's default (flag-definitions.h, Node 20): each growth doubles the young generation. */
const V8_DEFAULT_GROWTH_FACTOR = 2;

const userTuned = () => /semi[-_]space/.test([...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' '));

/** While the daemon's modules load (bin/toolgate.mjs). */
export function holdYoungGeneration(): void {
  if (!userTuned()) setFlagsFromString('--semi-space-growth-factor=1');
}

/** Once the daemon serves (`serve`). */
export function releaseYoungGeneration(): void {
  if (!userTuned()) setFlagsFromString(`--semi-space-growth-factor=${V8_DEFAULT_GROWTH_FACTOR}`);
}
