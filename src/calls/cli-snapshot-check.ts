/**
 * The build's word that the package's project-cli start-up snapshot runs on
 * this node: scripts/bundle-cli.mjs makes the blob, runs one real call through
 * it, and only then writes `dist/project-cli.snapshot.checked.json` — this
 * module's `snapshotFacts` of the node that ran the call and the blob it ran.
 * A daemon whose own facts are the same (same node binary, same CPU, the
 * same blob: its size and SHA-256) knows the blob runs without starting a
 * probe of its own (src/calls/cli-launch.ts); any difference — another node,
 * an upgraded one at the same path, another CPU, a blob rebuilt or damaged
 * since (unless its size and time were set back: below) — and it probes as
 * before. The CPU is among the facts because V8 refuses a blob made
 * where other CPU features were detected (its `cachedDataVersionTag` covers
 * the V8 version, its flags and the CPU's features): an image built on one
 * host and run on another shares every other fact. Only Linux says which CPU
 * this is cheaply (/proc/cpuinfo); elsewhere there are no facts, and always a
 * probe. Should a blob trusted here still not load, the first call it fails
 * moves the daemon to the bundle and runs again from there
 * (subprocess-executor.ts).
 * Measured on this 2-core machine: the facts cost two stats, a read of
 * /proc/cpuinfo and one SHA-256 of the 5.8 MB blob (~15–30 ms of CPU), the
 * probe a whole node start from the blob (~120–170 ms). The SHA-256 is only
 * computed when the node and CPU are the build's and the blob's size or
 * modification time differ from the build's:
 * in the checkout that built it they do not (every daemon start there, and
 * every test's, skipped 15 ms of hashing), while a copy — npm's extraction
 * sets every file's time — hashes it as before. A blob rewritten to the same
 * size with its time set back is taken at the build's word, as the check file
 * itself is: whoever can write the one can write the other.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';

/** Beside the blob: `<blob without .blob>.checked.json`. */
export function snapshotCheckPath(blob: string): string {
  return `${blob.replace(/\.blob$/, '')}.checked.json`;
}

/**
 * What decides whether a blob runs: the node binary (version, platform, the file itself), the CPU and the
 * blob (its size and SHA-256, and its time: see the top of this module); null where the CPU cannot be told
 * (not Linux).
 */
export async function snapshotFacts(blob: string): Promise<Record<string, unknown> | null> {
  const runtime = await runtimeFacts();
  return runtime && { ...runtime, blob: await blobFacts(blob) };
}

/** Every fact but the blob's: the node binary and the CPU; null where the CPU cannot be told (not Linux). */
async function runtimeFacts(): Promise<Record<string, unknown> | null> {
  if (process.platform !== 'linux') return null;
  const [exec, cpuinfo] = await Promise.all([stat(process.execPath), readFile('/proc/cpuinfo', 'utf8')]);
  const cpu = cpuOf(cpuinfo);
  if (!cpu) return null;
  return {
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    exec: { path: process.execPath, size: exec.size, mtimeMs: exec.mtimeMs },
    cpu,
  };
}

/** The blob's size, modification time and SHA-256, as the build writes them. */
interface BlobFacts {
  size: number;
  mtimeMs: number;
  sha256: string;
}

/** The blob's facts; its hash is the build's (`known`) when size and time are the build's. */
async function blobFacts(blob: string, known?: BlobFacts): Promise<BlobFacts> {
  const file = await stat(blob);
  if (known && known.size === file.size && known.mtimeMs === file.mtimeMs) return { size: file.size, mtimeMs: file.mtimeMs, sha256: known.sha256 };
  const bytes = await readFile(blob);
  return { size: bytes.length, mtimeMs: file.mtimeMs, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** A check's blob facts as the build writes them (a check that says less is no check: its hash is never taken on its word). */
function isBlobFacts(value: unknown): value is BlobFacts {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return typeof v.size === 'number' && typeof v.mtimeMs === 'number' && typeof v.sha256 === 'string' && /^[0-9a-f]{64}$/.test(v.sha256);
}

/** The first processor's vendor, family, model and feature flags (what V8's CPU detection reads), or null. */
export function cpuOf(cpuinfo: string): Record<string, string> | null {
  const first = cpuinfo.split(/\n\s*\n/)[0] ?? '';
  const field = (name: string) => new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(first)?.[1]?.trim();
  const cpu = { vendor: field('vendor_id'), family: field('cpu family'), model: field('model'), flags: field('flags') };
  if (Object.values(cpu).some((v) => v === undefined)) return null;
  return cpu as Record<string, string>;
}

/** Whether the build checked this very blob on this very node (no file, an unreadable one or any difference: no). */
export async function checkedByBuild(blob: string): Promise<boolean> {
  try {
    const written: unknown = JSON.parse(await readFile(snapshotCheckPath(blob), 'utf8'));
    if (written === null || typeof written !== 'object' || Array.isArray(written)) return false;
    const { blob: writtenBlob, ...writtenRuntime } = written as Record<string, unknown>;
    // The node and the CPU first: where they differ (an installed copy on another machine, usually) the blob is
    // not read at all.
    const runtime = await runtimeFacts();
    if (runtime === null || JSON.stringify(writtenRuntime) !== JSON.stringify(runtime) || !isBlobFacts(writtenBlob)) return false;
    // The blob's time is how the hash is skipped, not a fact of its own: a copy (npm's extraction) has another.
    const now = await blobFacts(blob, writtenBlob);
    return now.size === writtenBlob.size && now.sha256 === writtenBlob.sha256;
  } catch {
    return false;
  }
}
