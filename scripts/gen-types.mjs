// Generates TypeScript types from every JSON Schema in schemas/ into src/generated/.
// The schemas are the source of truth for wire shapes that front ends implement.
import { readdir, readFile, writeFile, mkdir } from 'node:fs/promises';
import { join, basename } from 'node:path';
import { compile } from 'json-schema-to-typescript';

const root = new URL('..', import.meta.url).pathname;
const outDir = join(root, 'src', 'generated');
await mkdir(outDir, { recursive: true });
for (const file of (await readdir(join(root, 'schemas'))).filter((f) => f.endsWith('.json')).sort()) {
  const schema = JSON.parse(await readFile(join(root, 'schemas', file), 'utf8'));
  const name = basename(file, '.json');
  const ts = await compile(schema, schema.title ?? name, {
    bannerComment: `/* Generated from schemas/${file} by scripts/gen-types.mjs. Do not edit. */`,
    cwd: join(root, 'schemas'),
    additionalProperties: false,
  });
  await writeFile(join(outDir, `${name}.ts`), ts);
}
