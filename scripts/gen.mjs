// npm run gen: regenerates schemas/*.json and protocol/index.{d.ts,js} from src/protocol.
// `--out DIR` writes them under DIR instead of the repository (the up-to-date test compares).
// src/protocol is bundled with esbuild first, so generation needs no full build.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { generateAll } from './gen-lib.mjs';

const root = new URL('..', import.meta.url).pathname;
const { values } = parseArgs({ options: { out: { type: 'string' } } });
const outRoot = values.out ?? root;

const work = await mkdtemp(join(tmpdir(), 'toolgate-gen-'));
try {
  const bundle = join(work, 'protocol.mjs');
  await build({
    stdin: {
      contents: "export * from './src/protocol/index.ts'; export { toJSONSchema } from 'zod';",
      resolveDir: root,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: bundle,
    logLevel: 'warning',
  });
  const protocol = await import(pathToFileURL(bundle).href);
  const files = await generateAll(protocol);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(outRoot, path)), { recursive: true });
    await writeFile(join(outRoot, path), content);
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
