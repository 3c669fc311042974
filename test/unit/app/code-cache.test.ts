/**
 * bin/code-cache.cjs: a V8 code cache is used only by the runtime that wrote
 * it. Every Node 20 release reports V8 11.3.244.8 to V8's own check, and a
 * cache one of them wrote crashed another (measured: a build on 20.20.2, run
 * on 20.16.0, ended `toolgate --version` in a segmentation fault), so the
 * launchers read a cache through this stamp and nothing else.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { REPO_ROOT, tempDir } from '../../helpers/repo.js';

const { readCodeCache, writeCodeCache } = createRequire(import.meta.url)(join(REPO_ROOT, 'bin', 'code-cache.cjs')) as {
  readCodeCache(file: string): Buffer | undefined;
  writeCodeCache(file: string, data: Buffer): void;
};

/** Bytes standing for V8's cache data: any bytes, a newline among them included. */
const DATA = Buffer.from([0xc0, 0xde, 0x0a, 0x00, 0xff, 0x0a, 0x01]);

test('a cache this runtime wrote reads back byte for byte, after one stamp line naming this runtime', () => {
  const file = join(tempDir('toolgate-code-cache-'), 'x.cache');
  writeCodeCache(file, DATA);
  const read = readCodeCache(file)!;
  assert.deepEqual(read, DATA);
  // V8 copies cache data that does not start on a pointer boundary: the stamp line is padded to keep it aligned.
  assert.equal(read.byteOffset % 8, 0, `V8's bytes start at offset ${read.byteOffset}`);
  const bytes = readFileSync(file);
  const stamp = bytes.subarray(0, bytes.indexOf(0x0a)).toString('latin1').trimEnd();
  assert.match(stamp, /^toolgate-v8-code-cache \{/);
  assert.deepEqual(JSON.parse(stamp.slice(stamp.indexOf('{'))), {
    node: process.version,
    v8: process.versions.v8,
    platform: process.platform,
    arch: process.arch,
    execSize: statSync(process.execPath).size,
  });
});

test("another runtime's cache, an unstamped one (a build from before stamps), or none is not used", () => {
  const dir = tempDir('toolgate-code-cache-');
  const mine = join(dir, 'mine.cache');
  writeCodeCache(mine, DATA);
  const bytes = readFileSync(mine);
  const stamp = bytes.subarray(0, bytes.indexOf(0x0a)).toString('latin1').trimEnd();
  const rest = bytes.subarray(bytes.indexOf(0x0a));
  const others = {
    // The case that crashed: the same V8 version number, another Node release.
    'another Node release': stamp.replace(`"node":"${process.version}"`, `"node":"${process.version === 'v20.16.0' ? 'v20.20.2' : 'v20.16.0'}"`),
    'another V8 build': stamp.replace(`"v8":"${process.versions.v8}"`, `"v8":"${process.versions.v8}-other"`),
    'another node binary of the same version': stamp.replace(/"execSize":\d+/, '"execSize":1'),
    'another architecture': stamp.replace(`"arch":"${process.arch}"`, '"arch":"s390x"'),
  };
  for (const [what, other] of Object.entries(others)) {
    assert.notEqual(other, stamp, what);
    const file = join(dir, 'other.cache');
    writeFileSync(file, Buffer.concat([Buffer.from(other, 'latin1'), rest]));
    assert.equal(readCodeCache(file), undefined, what);
  }
  const unstamped = join(dir, 'unstamped.cache');
  writeFileSync(unstamped, Buffer.concat([Buffer.alloc(2048, 0x41), DATA]));
  assert.equal(readCodeCache(unstamped), undefined, 'no stamp line within its first 1024 bytes');
  const raw = join(dir, 'raw.cache');
  writeFileSync(raw, DATA);
  assert.equal(readCodeCache(raw), undefined, 'V8 bytes alone');
  assert.equal(readCodeCache(join(dir, 'absent.cache')), undefined);
});
