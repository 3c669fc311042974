/**
 * Docs that run: a markdown page's ```sh blocks, in order, from the
 * repository root of this built checkout, in a fresh home folder (so a fresh
 * data folder) — as a newcomer would paste them. Each must exit 0, and a
 * block followed by a `text` block must print that output (ids, times,
 * tokens and counts masked). A block after `<!-- no-run (why) -->` is
 * skipped; one after `<!-- background … -->` is started and waited on for its
 * `{"listening":…}` line, then stopped at the end. Port 8787 becomes a free
 * port; a page's placeholders (README's `/home/you/toolgate`) become this
 * checkout. QUICKSTART_PRINT=1 prints what each block wrote, to refresh a page.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT, tempDir } from './repo.js';

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
export function mask(text: string): string {
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

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface PageRun {
  /** The fresh home the blocks ran in (its data folder holds the dev secret they made). */
  home: string;
  port: number;
  /** Every block that ran, with what it printed on stdout. */
  ran: Array<{ line: number; stdout: string }>;
  /** Blocks skipped by a `no-run` marker. */
  skipped: number;
}

/** A fence language that holds shell commands but would escape the runner: write them as ```sh. */
const SHELL_LANGS = new Set(['bash', 'shell', 'console', 'zsh', 'shellsession']);

/**
 * Runs the ```sh blocks of `relPath` (relative to the repository root) as
 * printed; `substitute` maps a page's placeholders to what they stand for
 * here. Background daemons are stopped before it returns.
 */
export async function runDocPage(relPath: string, substitute: Array<[string, string]> = []): Promise<PageRun> {
  const all = docBlocks(readFileSync(join(REPO_ROOT, relPath), 'utf8'));
  for (const b of all) assert.ok(!SHELL_LANGS.has(b.lang), `${relPath}:${b.line}: a \`\`\`${b.lang} block — write shell commands as \`\`\`sh so they run (or mark them <!-- no-run (why) -->)`);
  for (const b of all.filter((x) => x.marker === 'no-run' && x.lang === 'sh')) {
    const why = /<!--\s*no-run\s*\(([^)]+)\)/.exec(markerLine(relPath, b.line));
    assert.ok(why, `${relPath}:${b.line}: a no-run marker says why: <!-- no-run (reason) -->`);
  }
  const blocks = all.filter((b) => b.lang === 'sh');
  const home = tempDir('toolgate-docs-');
  const state = join(home, '.docs-env');
  writeFileSync(state, '');
  const port = await freePort();
  const subs: Array<[string, string]> = [['8787', String(port)], ...substitute];
  const apply = (s: string) => subs.reduce((acc, [from, to]) => acc.replaceAll(from, to), s);
  const unapply = (s: string) => subs.reduce((acc, [from, to]) => acc.replaceAll(to, from), s);
  const env = { PATH: process.env.PATH ?? '', HOME: home, LANG: 'C.UTF-8' };
  const background: ChildProcess[] = [];
  const run: PageRun = { home, port, ran: [], skipped: 0 };
  try {
    for (const block of blocks) {
      if (block.marker === 'no-run') {
        run.skipped++;
        continue;
      }
      const script = apply(block.body);
      const where = `${relPath}:${block.line}`;
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
        if (block.expected !== null) assert.equal(unapply(line), block.expected.trim(), where);
        run.ran.push({ line: block.line, stdout: '' });
        continue;
      }
      // `set -e` spares the left side of `a && b`: the block's own last status is its exit.
      const r = spawnSync('bash', ['-c', `set -eo pipefail; source ${state}; ${script}\nrc=$?; export -p > ${state}; exit $rc`], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 120_000 });
      if (process.env.QUICKSTART_PRINT === '1') process.stdout.write(`--- ${where}\n${unapply(r.stdout)}`);
      assert.equal(r.status, 0, `${where} failed as printed:\n${block.body}\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
      if (block.expected !== null && process.env.QUICKSTART_PRINT !== '1') {
        assert.equal(mask(unapply(r.stdout)), mask(block.expected), `${where} printed something else`);
      }
      run.ran.push({ line: block.line, stdout: r.stdout });
    }
  } finally {
    for (const child of background) {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGTERM');
    }
  }
  return run;
}

/** The marker line above the block that opens at `line` (1-based). */
function markerLine(relPath: string, line: number): string {
  const lines = readFileSync(join(REPO_ROOT, relPath), 'utf8').split('\n');
  let j = line - 2;
  while (j >= 0 && lines[j]!.trim() === '') j--;
  return lines[j] ?? '';
}
