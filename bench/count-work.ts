/**
 * How often the daemon serializes, validates and walks per call: JSON.stringify,
 * JSON.parse, zod parses, the walks of the secret scan and the well-formedness
 * check, action lookups and args digests counted exactly (bench/count-preload.ts) in the
 * daemon process over N calls after a warm-up — per in-process
 * `tool/invoke calendar.create` (`serve --stdio`) and per MCP `tools/call`
 * (`serve --mcp`, the SDK's own client).
 *
 *   npm run build && node dist/bench/count-work.js [N]      (default 20)
 *   COUNT_DETAIL=1 … also prints the JSON calls by caller, the zod parses by kind and each walk
 */
import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BENCH_DIST, TOOLGATE_BIN, childEnv, tempDir } from './env.js';
import { calendarInput } from './anchors/calendar-input.js';
import { mintBearer, startToolgateStdio, toolgateEnv, writeConfig } from './targets/toolgate.js';

const N = Number(process.argv[2] ?? 20);
const WARM = 20;
const PRELOAD = ['--import', pathToFileURL(join(BENCH_DIST, 'count-preload.js')).href];

interface Counts {
  stringify: Record<string, number>;
  parse: Record<string, number>;
  zod: Record<string, number>;
  /** Walks of a value (secret scan, well-formedness, credential fields, the screen), action lookups, digests: by function. */
  walks: Record<string, number>;
}

async function waitForFile(file: string): Promise<void> {
  const until = performance.now() + 10_000;
  while (!existsSync(file)) {
    if (performance.now() > until) throw new Error(`count: no ${file} (was the preload loaded?)`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** The counts of process `pid` over `work`: one signal before (start), one after (write them out). */
async function counted(pid: number, out: string, work: () => Promise<void>): Promise<Counts> {
  process.kill(pid, 'SIGUSR2');
  await waitForFile(`${out}.armed`);
  await work();
  process.kill(pid, 'SIGUSR2');
  await waitForFile(out);
  await new Promise((r) => setTimeout(r, 20)); // the file is written in one call; let it finish
  const counts = JSON.parse(readFileSync(out, 'utf8')) as Counts;
  unlinkSync(out);
  unlinkSync(`${out}.armed`);
  return counts;
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

function print(title: string, c: Counts): void {
  const per = (n: number) => (n / N).toFixed(2).replace(/\.00$/, '');
  const walks = Object.entries(c.walks).filter(([k]) => / walk | screen /.test(` ${k} `));
  const secretWalks = walks.filter(([k]) => /^(secret walk|one screen)/.test(k)).reduce((a, [, n]) => a + n, 0);
  const lookups = c.walks['action lookup (lookupAction)'] ?? 0;
  const digests = c.walks['args digest (argsSha256)'] ?? 0;
  console.log(
    `${title}: per call  JSON.stringify ${per(sum(c.stringify))}  JSON.parse ${per(sum(c.parse))}  zod parses ${per(sum(c.zod))}` +
      `  secret walks ${per(secretWalks)}  walks in all ${per(walks.reduce((a, [, n]) => a + n, 0))}  action lookups ${per(lookups)}  args digests ${per(digests)}`,
  );
  if (!process.env.COUNT_DETAIL) return;
  for (const [label, r] of [['JSON.stringify', c.stringify], ['JSON.parse', c.parse], ['zod parses, by kind', c.zod], ['walks, lookups and digests', c.walks]] as const) {
    console.log(`  ${label}:`);
    for (const [at, n] of Object.entries(r)) console.log(`    ${per(n).padStart(6)}  ${at}`);
  }
}

async function inprocess(): Promise<void> {
  const dir = tempDir();
  const out = join(dir, 'counts.json');
  const tg = await startToolgateStdio({ executor: 'inprocess', dbFile: join(dir, 'c.db'), dataDir: dir, synchronous: 'FULL', nodeArgs: PRELOAD, unbundled: true, env: { COUNT_OUT: out } });
  try {
    for (let i = 0; i < WARM; i++) await tg.call(i);
    const c = await counted(tg.pid, out, async () => {
      for (let i = WARM; i < WARM + N; i++) await tg.call(i);
    });
    print('in-process tool/invoke calendar.create', c);
  } finally {
    await tg.stop();
  }
}

async function mcp(): Promise<void> {
  const dir = tempDir();
  const out = join(dir, 'counts.json');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...PRELOAD, TOOLGATE_BIN, 'serve', '--mcp', '--executor', 'inprocess', '--db', join(dir, 'm.db'), '--config', writeConfig(dir, 'FULL')],
    env: childEnv({ ...toolgateEnv(dir), COUNT_OUT: out, TOOLGATE_UNBUNDLED: '1', TOOLGATE_MCP_TOKEN: await mintBearer('bench') }),
    stderr: 'pipe',
  });
  const client = new Client({ name: 'toolgate-count', version: '1.0.0' });
  await client.connect(transport);
  const call = async (i: number) => {
    const r = await client.callTool({ name: 'project_cli', arguments: { module: 'calendar', method: 'create', input: calendarInput(i) } });
    if (r.isError) throw new Error(`MCP call failed: ${JSON.stringify(r.content).slice(0, 300)}`);
  };
  try {
    for (let i = 0; i < WARM; i++) await call(i);
    const c = await counted(transport.pid!, out, async () => {
      for (let i = WARM; i < WARM + N; i++) await call(i);
    });
    print('MCP tools/call project_cli calendar.create', c);
  } finally {
    await client.close();
  }
}

await inprocess();
await mcp();
