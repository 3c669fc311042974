import { runCli } from './run-cli.js';
import { helpFor } from './help.js';

/** `project-cli` process entry: stdin (when piped), env, argv → one JSON document + exit code. */
export async function main(): Promise<void> {
  // Help is text, needs no credential and is answered before stdin is read.
  const help = helpFor(process.argv.slice(2));
  if (help) {
    process.stdout.write(help.stdout);
    process.stderr.write(help.stderr);
    process.exitCode = help.exitCode;
    return;
  }
  const stdin = process.stdin.isTTY ? null : await readAll(process.stdin);
  const outcome = await runCli({ argv: process.argv.slice(2), env: process.env, stdin });
  process.stdout.write(`${outcome.stdout}\n`);
  process.exitCode = outcome.exitCode;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}
