'use strict';
// The build's V8 code caches (dist/daemon/toolgate.cjs.cache, dist/project-cli.bundle.cjs.cache), each
// stamped with the runtime that made it: both launchers (bin/toolgate.mjs, bin/project-cli.cjs) read and
// write them through here.
//
// Why a stamp: V8 refuses a cache made by another V8 version or under other flags, but every Node 20
// release carries V8 11.3.244.8 — only the embedder's suffix differs (`-node.23` in 20.16.0, `-node.38`
// in 20.20.2) — and a cache made by one of them is accepted by another and crashes it: measured, a build
// made on Node 20.20.2 run on 20.16.0 ended `toolgate --version` and `project-cli --help` in a segmentation
// fault. The npm package ships the caches, so any other Node 20 release would crash at every start. A cache
// is therefore used only by the very runtime that wrote it: same Node version, V8 version (with its suffix),
// platform, architecture and node binary size (another build of the same version, a distribution's, is
// another binary). Any other runtime compiles the script without a cache, as when there is none.
//
// The file: one line `toolgate-v8-code-cache <runtime JSON>`, padded with spaces so that the line with its
// `\n` is a multiple of 16 bytes, then V8's bytes, handed to V8 as a view of the same buffer. The padding
// keeps that view aligned: V8 copies cache data that does not start on a pointer boundary (measured, an
// unpadded 121-byte line cost project-cli's bundle start ~120 more page faults).
const { readFileSync, statSync, writeFileSync } = process.getBuiltinModule('node:fs');

const MAGIC = 'toolgate-v8-code-cache';
/** A stamp longer than this is not one (the JSON is ~120 bytes). */
const MAX_STAMP = 1024;
/** The stamp line's length, `\n` included, is a multiple of this: V8's bytes start aligned. */
const ALIGN = 16;

/** The line that names this runtime. */
function stampLine() {
  const runtime = {
    node: process.version,
    v8: process.versions.v8,
    platform: process.platform,
    arch: process.arch,
    execSize: statSync(process.execPath).size,
  };
  return `${MAGIC} ${JSON.stringify(runtime)}`;
}

/**
 * The V8 cache data in `file` when this runtime wrote it; undefined when there is no file, it cannot be
 * read, it has no stamp (a build from before stamps) or another runtime's stamp.
 */
function readCodeCache(file) {
  let bytes;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  const end = bytes.subarray(0, MAX_STAMP + 1).indexOf(0x0a);
  if (end < 0) return undefined;
  try {
    if (bytes.toString('latin1', 0, end).trimEnd() !== stampLine()) return undefined;
  } catch {
    return undefined; // the node binary cannot be stat'ed: no way to tell, so no cache
  }
  return bytes.subarray(end + 1);
}

/** Writes V8's cache `data` to `file`, stamped with this runtime. */
function writeCodeCache(file, data) {
  const line = stampLine();
  const padded = line.padEnd(Math.ceil((line.length + 1) / ALIGN) * ALIGN - 1, ' ');
  writeFileSync(file, Buffer.concat([Buffer.from(`${padded}\n`, 'latin1'), data]));
}

module.exports = { readCodeCache, writeCodeCache };
