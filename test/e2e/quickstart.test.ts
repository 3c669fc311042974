/**
 * Docs that run (test/helpers/doc-run.ts): the ```sh blocks of
 * docs/quickstart.md, README.md and examples/README.md, each page in a fresh
 * home, from the root of this built checkout, as printed; the README's
 * `mcpServers` entries as the quickstart prints them and as a host starts
 * them. Every `--help` example that runs by itself: help-examples.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { docBlocks, runDocPage } from '../helpers/doc-run.js';
import { REPO_ROOT, tempDir } from '../helpers/repo.js';

test('docs/quickstart.md runs as printed, in a fresh home, and prints what it shows', { timeout: 300_000 }, async () => {
  const run = await runDocPage('docs/quickstart.md');
  assert.ok(run.ran.length >= 6, 'the quickstart has its commands');
});

/** README's placeholder for the reader's checkout. */
const README_CHECKOUT = '/home/you/toolgate';

test('README.md: every sh block runs as printed (or says why not), in a fresh home', { timeout: 120_000 }, async () => {
  const run = await runDocPage('README.md', [[README_CHECKOUT, REPO_ROOT]]);
  assert.ok(run.ran.length >= 1 && run.skipped >= 1, `ran ${run.ran.length}, skipped ${run.skipped}`);
});

test('README.md: the mcpServers entries are the quickstart\'s, and the stdio one starts from / with a minimal PATH', { timeout: 120_000 }, async () => {
  const entries = (page: string, lang: string) =>
    docBlocks(readFileSync(join(REPO_ROOT, page), 'utf8'))
      .filter((b) => b.lang === lang && b.body.includes('"mcpServers"'))
      .map((b) => JSON.parse(b.body) as { mcpServers: { toolgate: Record<string, unknown> } });
  const readme = entries('README.md', 'json');
  assert.equal(readme.length, 2, 'README has a stdio and an HTTP entry');
  const [stdio, http] = readme as [(typeof readme)[0], (typeof readme)[0]];
  const quickstart = [...entries('docs/quickstart.md', 'text'), ...entries('docs/quickstart.md', 'json')];
  assert.deepEqual(quickstart, [stdio, http], 'README and docs/quickstart.md print the same mcpServers entries');

  // As a host starts it: its own working directory (/), a minimal PATH, the
  // entry's command and args with the placeholders filled in, a token from
  // README's dev-token command (a fresh home: the dev secret made there).
  const home = tempDir('toolgate-readme-mcp-');
  const env = { PATH: '/usr/bin:/bin', HOME: home };
  const mint = docBlocks(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')).find((b) => b.lang === 'sh' && b.body.includes('dev-token'));
  assert.ok(mint, 'README prints a dev-token command');
  const minted = spawnSync('bash', ['-c', mint.body.replaceAll(README_CHECKOUT, REPO_ROOT).replace(/^node /, `${JSON.stringify(process.execPath)} `)], { cwd: '/', env, encoding: 'utf8' });
  assert.equal(minted.status, 0, minted.stderr);
  const entry = stdio.mcpServers.toolgate as { command: string; args: string[]; env: Record<string, string> };
  const transport = new StdioClientTransport({
    command: entry.command.replace('/usr/local/bin/node', process.execPath),
    args: entry.args.map((a) => a.replace(README_CHECKOUT, REPO_ROOT)),
    env: { ...env, ...entry.env, TOOLGATE_MCP_TOKEN: entry.env.TOOLGATE_MCP_TOKEN!.replace('<the token from dev-token>', minted.stdout.trim()) },
    cwd: '/',
    stderr: 'ignore',
  });
  const client = new Client({ name: 'readme', version: '1' });
  await client.connect(transport);
  try {
    assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['project_cli']);
    const r = await client.callTool({ name: 'project_cli', arguments: { module: 'memory', method: 'read', input: {} } });
    assert.equal(r.isError, false, JSON.stringify(r));
  } finally {
    await client.close();
  }
  const http_ = http.mcpServers.toolgate as { url: string; headers: Record<string, string> };
  assert.equal(http_.url, 'http://127.0.0.1:8787/mcp', 'the HTTP entry points at the port README\'s serve --ws command uses');
  assert.match(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8'), /`node \/home\/you\/toolgate\/bin\/toolgate\.mjs serve --ws --port 8787 --dev`/);
});

test('README.md: its config example is a config serve --config accepts', () => {
  const configs = docBlocks(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')).filter((b) => b.lang === 'json' && b.body.includes('"agents"'));
  assert.ok(configs.length >= 1, 'README prints a config with agent profiles');
  for (const config of configs) {
    const home = tempDir('toolgate-readme-config-');
    const file = join(home, 'toolgate.config.json');
    writeFileSync(file, config.body);
    // stdin at its end: the daemon loads the config, serves, sees the host leave and stops, exit 0.
    const r = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'toolgate.mjs'), 'serve', '--stdio', '--dev', '--config', file], { env: { PATH: process.env.PATH ?? '', HOME: home }, input: '', encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, `README.md:${config.line}'s config:\n${r.stderr}`);
    assert.match(r.stderr, /"msg":"serving"/);
  }
});

test('examples/README.md: every sh block runs as printed, from the repository root, in a fresh home', { timeout: 120_000 }, async () => {
  const run = await runDocPage('examples/README.md');
  assert.ok(run.ran.length >= 2, `ran ${run.ran.length}`);
});
