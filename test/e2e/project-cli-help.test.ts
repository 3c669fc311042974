/**
 * `project-cli --help` and `project-cli <module> <method> --help`: text on
 * stdout with exit 0, no credential, no database, and no waiting for stdin.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { ACTION_NAMES, REGISTRY, inputJsonSchema } from '../../src/cli-router/registry.js';
import { flagKinds } from '../../src/cli-router/argv.js';
import { helpFor } from '../../src/cli-router/help.js';
import { PROJECT_CLI_BIN } from '../helpers/repo.js';

/** Runs project-cli with an empty environment and a stdin that is never closed. */
function projectCli(args: string[], opts: { endStdin?: boolean } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PROJECT_CLI_BIN, ...args], { env: {}, stdio: ['pipe', 'pipe', 'pipe'] });
    if (opts.endStdin) child.stdin.end();
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`project-cli ${args.join(' ')} waited for stdin`));
    }, 20_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      child.stdin.destroy();
      resolve({ code, stdout, stderr });
    });
  });
}

/** project-cli's help for `args` as the binary answers it (src/cli-router/main.ts), without a process. */
function inProcessHelp(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const help = helpFor(args);
  assert.ok(help, `${args.join(' ')} is help`);
  return { code: help.exitCode, stdout: help.stdout, stderr: help.stderr };
}

test('project-cli --help lists every action on one line, without a credential', async () => {
  for (const flag of ['--help', '-h', 'help']) {
    const r = await projectCli([flag]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    for (const name of ACTION_NAMES) {
      const [module, method] = name.split('.');
      assert.match(r.stdout, new RegExp(`^  ${module} ${method}\\s+\\S.*$`, 'm'), `lists ${name}`);
    }
    assert.match(r.stdout, /PROJECT_CLI_CREDENTIAL/);
  }
});

test('project-cli <module> --help lists that module\'s actions only', async () => {
  const r = await projectCli(['memory', '--help']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^  memory update\s/m);
  assert.doesNotMatch(r.stdout, /^  calendar /m);
});

test('project-cli <module> <method> --help prints every flag and the input schema of each action', async () => {
  for (const [i, name] of ACTION_NAMES.entries()) {
    const action = REGISTRY.get(name)!;
    const args = [action.module, action.method, '--help'];
    // The first through the binary (stdin left open: help must not wait for it); the others through the
    // function it answers help with, in this process: the text is what is checked here.
    const r = i === 0 ? await projectCli(args) : inProcessHelp(args);
    assert.equal(r.code, 0, `${name}: ${r.stderr}`);
    assert.equal(r.stderr, '');
    assert.ok(r.stdout.startsWith(`project-cli ${action.module} ${action.method} — ${action.summary}`), name);
    for (const field of flagKinds(inputJsonSchema(action)).keys()) {
      assert.match(r.stdout, new RegExp(`^  --${field.replace(/_/g, '-')} `, 'm'), `${name} names --${field}`);
    }
    const schemaText = r.stdout.split('input schema (JSON Schema):\n')[1];
    assert.ok(schemaText, `${name} prints its input schema`);
    assert.deepEqual(JSON.parse(schemaText), inputJsonSchema(action), name);
  }
});

test('help after other flags still answers, and names formats and required fields', async () => {
  const r = await projectCli(['calendar', 'read', '--mode', 'day', '--help']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /--mode day\|range\|event\s+required/);
  assert.match(r.stdout, /--date DATE\s/);
  assert.doesNotMatch(r.stdout, /"pattern"/);
});

test('help for an action that does not exist is one line on stderr, exit 2', async () => {
  for (const args of [['calendar', 'list', '--help'], ['weather', '--help']]) {
    const r = await projectCli(args);
    assert.equal(r.code, 2, args.join(' '));
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^project-cli: unknown (action|module) /);
  }
});

test('without --help, a call without a credential is still the JSON document', async () => {
  const r = await projectCli(['calendar', 'read', '--mode', 'day', '--date', '2026-04-21'], { endStdin: true });
  assert.equal(r.code, 3);
  assert.equal((JSON.parse(r.stdout) as { error: { code: string } }).error.code, 'UNAUTHENTICATED');
});
