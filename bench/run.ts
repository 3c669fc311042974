/**
 * `npm run bench`: where the time of one tool call goes, measured side by
 * side in one run. Reports medians and ratios (never thresholds: these
 * machines are shared and noisy).
 *
 *   1. end to end over stdio, subprocess vs in-process executor
 *   2. the parts of a call in isolation: credential sign / verify,
 *      runCli in-process (validate + SQLite transaction), projection, message insert
 */
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../test/helpers/repo.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { startHost, openSession, type Host } from '../test/helpers/host.js';
import { mintBearer } from '../test/helpers/tokens.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { loadSigningKey, issueClaims, signCredential } from '../src/daemon/credential-issuer.js';
import { verifyCredential } from '../src/cli-router/credential.js';
import { runCli, CLI_ENV } from '../src/cli-router/run-cli.js';
import { buildToolAgentOutput, projectText } from '../src/codec/tool-output.js';
import { deriveUiHints } from '../src/codec/ui-hints.js';
import { compileUiSchema } from '../src/codec/ui-schema-compiler.js';

interface Stat {
  name: string;
  median: number;
  p90: number;
  n: number;
}

function stats(name: string, samples: number[]): Stat {
  const s = [...samples].sort((a, b) => a - b);
  return { name, median: s[Math.floor(s.length / 2)]!, p90: s[Math.floor(s.length * 0.9)]!, n: s.length };
}

async function time(n: number, fn: (i: number) => unknown | Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  return out;
}

const fmt = (ms: number) => (ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(1)} µs`);

function table(title: string, rows: Stat[], baseline?: Stat): void {
  console.log(`\n${title}`);
  console.log(`  ${'what'.padEnd(44)} ${'median'.padStart(11)} ${'p90'.padStart(11)} ${'n'.padStart(5)}${baseline ? '   ratio' : ''}`);
  for (const r of rows) {
    const ratio = baseline ? `   ×${(r.median / baseline.median).toFixed(1)}` : '';
    console.log(`  ${r.name.padEnd(44)} ${fmt(r.median).padStart(11)} ${fmt(r.p90).padStart(11)} ${String(r.n).padStart(5)}${ratio}`);
  }
}

async function endToEnd(executor: 'subprocess' | 'inprocess', n: number): Promise<Stat[]> {
  const host: Host = await startHost({ transport: 'stdio', args: ['--executor', executor] });
  try {
    const s = await openSession(host, await mintBearer('bench'));
    const call = (i: number, args: unknown) =>
      host.request('tool/invoke', { session_id: s.session_id, thread_id: `bench-${executor}`, tool_call_id: `c${i}-${Math.random()}`, args });
    await time(5, (i) => call(i, { module: 'memory', method: 'read', input: {} })); // warm up
    const create = await time(n, (i) =>
      call(i, { module: 'calendar', method: 'create', input: { title: `B${i}`, start_at: '2026-04-21T10:00:00Z', end_at: '2026-04-21T11:00:00Z' } }),
    );
    const read = await time(n, (i) => call(i, { module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-04-21' } }));
    const invalid = await time(n, (i) => call(i, { module: 'calendar', method: 'read', input: { mode: 'day', date: 'soon' } }));
    return [
      stats(`${executor}: calendar.create`, create),
      stats(`${executor}: calendar.read day (${n}+ events)`, read),
      stats(`${executor}: INVALID_ACTION_INPUT`, invalid),
    ];
  } finally {
    await host.stop();
  }
}

async function parts(n: number): Promise<Stat[]> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
  const dbPath = join(dir, 'toolgate.db');
  const store = openSqliteStore(dbPath);
  await store.transaction((tx) => tx.users.ensure('bench'));
  const key = await loadSigningKey({}, dir);
  const req = { userId: 'bench', actions: ['calendar.create'], source: 'session' as const, jobId: null, call: null };
  const issue = async () => {
    const issued = issueClaims(req);
    const token = await signCredential(issued.claims, key);
    await store.transaction((tx) => tx.credentialAudit.record(issued.audit));
    return token;
  };
  const sign = await time(n, issue);
  const token = await issue();
  const verify = await time(n, () => verifyCredential(token, key.publicJwk));
  const env = { [CLI_ENV.credential]: token, [CLI_ENV.verifyKey]: JSON.stringify(key.publicJwk), [CLI_ENV.db]: dbPath };
  const input = { title: 'Part', start_at: '2026-04-21T10:00:00Z', end_at: '2026-04-21T11:00:00Z' };
  const cli = await time(n, () => runCli({ argv: ['calendar', 'create'], env, stdin: JSON.stringify(input) }));
  const out = await runCli({ argv: ['calendar', 'create'], env, stdin: JSON.stringify(input) });
  const doc = JSON.parse(out.stdout);
  const args = { module: 'calendar', method: 'create', input };
  const project = await time(n, () => projectText(buildToolAgentOutput(doc, args, 'c', deriveUiHints)));
  const output = buildToolAgentOutput(doc, args, 'c', deriveUiHints);
  const ui = await time(n, () => compileUiSchema(output.ui_hints as never));
  const insert = await time(n, (i) =>
    store.transaction((tx) =>
      tx.messages.insert({ userId: 'bench', threadId: 'bench', role: 'tool', content: projectText(output), metadataJson: JSON.stringify({ tool_agent_output: output }), toolCallId: `p${i}` }),
    ),
  );
  await store.close();
  return [
    stats('issue credential (Ed25519 sign + audit row)', sign),
    stats('verify credential (EdDSA; key imported once)', verify),
    stats('runCli in-process (validate + transaction)', cli),
    stats('post-process + projection', project),
    stats('ui_hints → ui_schema compile', ui),
    stats('store tool message (transaction)', insert),
  ];
}

/** project-cli start-up alone (a usage error: no credential, no database): bundle vs module tree. */
async function startup(n: number): Promise<Stat[]> {
  const tree = pathToFileURL(join(REPO_ROOT, 'dist', 'src', 'cli-router', 'main.js')).href;
  const variants: Array<[string, string[]]> = [
    ['node -e "" (Node itself)', ['-e', '']],
    ['project-cli, bundled (bin/project-cli.mjs)', [join(REPO_ROOT, 'bin', 'project-cli.mjs')]],
    ['project-cli, module tree (dist/src/…)', ['--input-type=module', '-e', `const m = await import(${JSON.stringify(tree)}); await m.main();`]],
  ];
  const samples = variants.map(() => [] as number[]);
  // Interleaved, so machine noise hits every variant alike.
  for (let i = 0; i < n; i++) {
    for (const [v, [, args]] of variants.entries()) {
      const t = performance.now();
      spawnSync(process.execPath, args, { input: '', env: {} });
      samples[v]!.push(performance.now() - t);
    }
  }
  return variants.map(([name], v) => stats(name, samples[v]!));
}

const n = Number(process.env.BENCH_N ?? 40);
console.log(`toolgate bench — node ${process.version}, n=${n} per row (BENCH_N to change)`);
const sub = await endToEnd('subprocess', n);
const inproc = await endToEnd('inprocess', n);
table('End to end over stdio (tool/invoke → response)', [...inproc, ...sub], inproc[0]);
for (let i = 0; i < sub.length; i++) {
  console.log(`  subprocess / in-process, ${sub[i]!.name.split(': ')[1]}: ×${(sub[i]!.median / inproc[i]!.median).toFixed(1)}`);
}
table('Parts of one call, in isolation', await parts(n * 5));
const boot = await startup(Math.max(10, Math.floor(n / 2)));
table('Process start-up (spawnSync, interleaved)', boot, boot[1]);
