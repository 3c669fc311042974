/**
 * The committed JSON Schemas and host types are exactly what `npm run gen` writes from src/protocol:
 * changing a zod schema without regenerating fails here (and so in CI).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, tempDir } from '../../helpers/repo.js';
import { REQUESTS, NOTIFICATIONS } from '../../../src/protocol/index.js';

function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? filesUnder(dir, join(prefix, d.name)) : [join(prefix, d.name)],
  );
}

test('schemas/ and protocol/ are byte-for-byte what npm run gen produces', () => {
  const out = tempDir();
  execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'gen.mjs'), '--out', out], { stdio: 'pipe' });
  const generated = filesUnder(out).sort();
  assert.ok(generated.includes(join('schemas', 'protocol.json')));
  for (const file of generated) {
    assert.equal(readFileSync(join(REPO_ROOT, file), 'utf8'), readFileSync(join(out, file), 'utf8'), `${file} is stale: run npm run gen`);
  }
  // Nothing hand-written is left beside the generated files.
  for (const dir of ['schemas', 'protocol']) {
    const committed = filesUnder(join(REPO_ROOT, dir)).map((f) => join(dir, f)).sort();
    assert.deepEqual(committed, generated.filter((f) => f.startsWith(`${dir}/`)), `${dir}/ holds files npm run gen does not write`);
  }
});

test('toolgate/protocol (the package export) names every method and serves the schemas without zod', async () => {
  const host = (await import('toolgate/protocol')) as typeof import('toolgate/protocol');
  assert.deepEqual(Object.keys(host.METHODS).sort(), Object.keys(REQUESTS).sort());
  assert.deepEqual(Object.keys(host.NOTIFICATIONS).sort(), Object.keys(NOTIFICATIONS).sort());
  assert.equal(host.PROTOCOL_VERSION, '1');
  assert.equal(host.RpcErrorCode.NotInitialized, -32002);
  for (const { params, result } of Object.values(host.METHODS)) {
    for (const id of [params, result]) {
      if (id === null) continue;
      const file = host.SCHEMA_FILE_OF[id];
      assert.ok(file, `${id} has a schema file`);
      const doc = host.schemas[file] as { title?: string; $defs?: Record<string, unknown> };
      assert.ok(doc.$defs?.[id] ?? doc.title === id, `${id} is in schemas/${file}.json`);
    }
  }
});
