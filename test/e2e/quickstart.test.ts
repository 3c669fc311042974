/**
 * Docs that run: docs/quickstart.md's shell blocks, in order, from the
 * repository root of this built checkout, in a fresh home folder (so a fresh
 * data folder) — as a newcomer would paste them. Each must exit 0, and a
 * block followed by a `text` block must print that output (ids, times,
 * tokens and counts masked). A block after `<!-- no-run … -->` is skipped;
 * one after `<!-- background … -->` is started and waited on for its
 * `{"listening":…}` line, then stopped at the end. Port 8787 becomes a free
 * port. QUICKSTART_PRINT=1 prints what each block wrote, to refresh the page.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ALL_SPECS } from '../../src/daemon/cli-commands.js';
import { REPO_ROOT, tempDir } from '../helpers/repo.js';

export interface DocBlock {
  lang: string;
  body: string;
  /** The marker comment right above the block, if any: `no-run` or `background`. */
  marker: 'no-run' | 'background' | null;
  /** The `text` block right after it: what it prints. */
  expected: string | null;
  line: number;
}

/** The fenced blocks of a markdown page, each with its marker and expected output. */
export function docBlocks(markdown: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: Array<Omit<DocBlock, 'expected'>> = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    let j = start - 1;
    while (j >= 0 && lines[j]!.trim() === '') j--;
    const m = j >= 0 ? /^<!--\s*(no-run|background)\b/.exec(lines[j]!) : null;
    blocks.push({ lang: open[1] ?? '', body: body.join('\n'), marker: (m?.[1] as DocBlock['marker']) ?? null, line: start + 1 });
  }
  return blocks.map((b, k) => ({ ...b, expected: b.lang === 'sh' && blocks[k + 1]?.lang === 'text' ? blocks[k + 1]!.body : null }));
}

/** What differs on every run: tokens, ids, times, counts of milliseconds, the machine's paths. */
function mask(text: string): string {
  return text
    .replace(/eyJ[\w-]*(\.[\w-]+){0,2}…?/g, 'JWT')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, 'TIME')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'UUID')
    .replace(/call-\d+/g, 'call-N')
    .replace(/"ms":\d+/g, '"ms":N')
    .replace(/"(command|args)": \[?\s*"[^"]*"/g, '"$1": PATH')
    .replace(/"\/[^"]*\/bin\/toolgate\.mjs"/g, '"PATH/bin/toolgate.mjs"')
    .trimEnd();
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('docs/quickstart.md runs as printed, in a fresh home, and prints what it shows', { timeout: 300_000 }, async () => {
  const page = join(REPO_ROOT, 'docs', 'quickstart.md');
  const blocks = docBlocks(readFileSync(page, 'utf8')).filter((b) => b.lang === 'sh');
  assert.ok(blocks.length >= 6, 'the quickstart has its commands');
  const home = tempDir('toolgate-quickstart-');
  const state = join(home, '.quickstart-env');
  writeFileSync(state, '');
  const port = String(await freePort());
  const env = { PATH: process.env.PATH ?? '', HOME: home, LANG: 'C.UTF-8' };
  const background: ChildProcess[] = [];
  try {
    for (const block of blocks) {
      if (block.marker === 'no-run') continue;
      const script = block.body.replaceAll('8787', port);
      const where = `docs/quickstart.md:${block.line}`;
      if (block.marker === 'background') {
        const child = spawn('bash', ['-c', `source ${state}; ${script}`], { cwd: REPO_ROOT, env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
        background.push(child);
        const line = await new Promise<string>((resolve, reject) => {
          let seen = '';
          child.once('exit', (code) => reject(new Error(`${where} exited ${code} before listening:\n${seen}`)));
          createInterface({ input: child.stderr! }).on('line', (l) => {
            seen += `${l}\n`;
            if (l.startsWith('{"listening"')) resolve(l);
          });
        });
        if (block.expected !== null) assert.equal(line.replaceAll(port, '8787'), block.expected.trim(), where);
        continue;
      }
      const r = spawnSync('bash', ['-c', `set -eo pipefail; source ${state}; ${script}\nexport -p > ${state}`], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 120_000 });
      if (process.env.QUICKSTART_PRINT === '1') process.stdout.write(`--- ${where}\n${r.stdout.replaceAll(port, '8787')}`);
      assert.equal(r.status, 0, `${where} failed:\n${r.stdout}\n${r.stderr}`);
      if (block.expected !== null && process.env.QUICKSTART_PRINT !== '1') {
        assert.equal(mask(r.stdout.replaceAll(port, '8787')), mask(block.expected), `${where} printed something else`);
      }
    }
  } finally {
    for (const child of background) {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGTERM');
    }
  }
});

/**
 * Every `--help` example that runs by itself (not a daemon that serves until
 * stopped, not one that needs another terminal), pasted into a shell where
 * `toolgate` is this checkout's bin, in a fresh home: each exits 0.
 */
test('the --help examples run as printed', { timeout: 300_000 }, () => {
  const home = tempDir('toolgate-help-examples-');
  const bin = join(home, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'toolgate'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(REPO_ROOT, 'bin', 'toolgate.mjs'))} "$@"\n`, { mode: 0o755 });
  const env = { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: home };
  const db = join(home, 'c.db');
  const serves = (line: string) => /^(TOOLGATE_BEARER_SECRET=… )?toolgate serve /.test(line) || line.includes('--ws ws://');
  let ran = 0;
  for (const spec of ALL_SPECS) {
    // One shell per command: an example may set a variable the next one uses (T=$(… dev-token …)).
    const lines = spec.examples.filter((l) => !serves(l)).map((l) => l.replaceAll('/tmp/c.db', db));
    if (lines.length === 0) continue;
    const r = spawnSync('bash', ['-c', `set -eo pipefail\n${lines.join('\n')}`], { cwd: home, env, encoding: 'utf8', timeout: 240_000 });
    assert.equal(r.status, 0, `toolgate ${spec.name} --help's examples:\n${lines.join('\n')}\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
    ran += lines.length;
  }
  assert.ok(ran >= 5, `ran ${ran} examples`);
});

test('examples/README.md: the stdio-host command runs as printed, from the repository root, in a fresh home', () => {
  const readme = readFileSync(join(REPO_ROOT, 'examples', 'README.md'), 'utf8');
  const command = /`(TOOLGATE_TOKEN=\$\(node bin\/toolgate\.mjs dev-token[^`]*)`/.exec(readme)?.[1];
  assert.ok(command, 'the README prints the stdio-host command');
  const r = spawnSync('bash', ['-c', `set -eo pipefail\n${command}`], { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', HOME: tempDir('toolgate-home-') }, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `${command}\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /^history: 1 message\(s\); the last is byte for byte that text: true$/m);
});
