/**
 * The build's word that the package's project-cli start-up snapshot runs on
 * this node: scripts/bundle-cli.mjs makes the blob, runs one real call through
 * it, and only then writes `dist/project-cli.snapshot.checked.json` — this
 * module's `snapshotFacts` of the node that ran the call and the blob it ran.
 * A daemon whose own facts are the same (same node binary, byte-identical
 * blob) knows the blob runs without starting a probe of its own
 * (src/calls/cli-launch.ts); any difference — another node, an upgraded one
 * at the same path, a blob rebuilt or damaged since — and it probes as before.
 * Measured on this 2-core machine: the facts cost one stat and one SHA-256 of
 * the 5.8 MB blob (~15–30 ms of CPU), the probe a whole node start from the
 * blob (~120–170 ms).
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';

/** Beside the blob: `<blob without .blob>.checked.json`. */
export function snapshotCheckPath(blob: string): string {
  return `${blob.replace(/\.blob$/, '')}.checked.json`;
}

/** What decides whether a blob runs: the node binary (version, platform, the file itself) and the blob's bytes. */
export async function snapshotFacts(blob: string): Promise<Record<string, unknown>> {
  const [exec, bytes] = await Promise.all([stat(process.execPath), readFile(blob)]);
  return {
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    exec: { path: process.execPath, size: exec.size, mtimeMs: exec.mtimeMs },
    blob: { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') },
  };
}

/** Whether the build checked this very blob on this very node (no file, an unreadable one or any difference: no). */
export async function checkedByBuild(blob: string): Promise<boolean> {
  try {
    const [written, now] = await Promise.all([readFile(snapshotCheckPath(blob), 'utf8'), snapshotFacts(blob)]);
    return written.trim() === JSON.stringify(now);
  } catch {
    return false;
  }
}
