/**
 * Every wire shape is declared once, in src/protocol (zod, types by z.infer). This test finds the
 * known shapes declared again anywhere else in src/ (the inspector aside: it becomes typed later)
 * or in the tests, so a copy that could drift from the protocol fails CI.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../helpers/repo.js';

const SHAPES = [
  'ToolResponse',
  'ToolStatus',
  'ToolError',
  'ToolErrorCode',
  'ToolCallArgs',
  'ToolResult',
  'ToolResultNotification',
  'ToolAgentOutput',
  'ToolProjection',
  'Event',
  'HistoryMessage',
  'SessionOpenResult',
  'InitializeResult',
  'SkillSummary',
  'CliDocument',
  'CliError',
  'UiSchema',
].join('|');

const REDECLARATIONS: Array<[RegExp, string]> = [
  [new RegExp(`\\binterface (${SHAPES})\\b`), 'an interface for a wire shape'],
  [new RegExp(`\\btype (${SHAPES}) =`), 'a type alias for a wire shape'],
  [/'INVALID_ACTION_INPUT',\s*'UNKNOWN_ACTION'/, 'a copy of the tool error codes'],
  [/batch_max_items:\s*\d/, 'the batch limit as a literal'],
  [/MAX_BATCH_ITEMS\s*=\s*\d/, 'the batch limit as a literal'],
  [/protocol_version:\s*z\./, 'a zod schema for initialize'],
  [/NotInitialized:\s*-32002/, 'a copy of the JSON-RPC error code table'],
  // The MCP output schema was a hand copy of ToolProjection (status enum, failure literal).
  [/status:\s*z\.(enum\(\[\s*'success'|literal\('failure'\))/, 'a zod copy of the tool projection / status'],
];

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return tsFiles(path);
    return d.name.endsWith('.ts') && !d.name.endsWith('.d.ts') ? [path] : [];
  });
}

test('no known wire shape is declared outside src/protocol (src/inspector aside)', () => {
  const skip = [join(REPO_ROOT, 'src', 'protocol'), join(REPO_ROOT, 'src', 'inspector'), join(REPO_ROOT, 'test', 'unit', 'wire-shapes-once.test.ts')];
  const files = [...tsFiles(join(REPO_ROOT, 'src')), ...tsFiles(join(REPO_ROOT, 'test'))].filter((f) => !skip.some((s) => f.startsWith(s)));
  assert.ok(files.length > 50, 'the scan sees the code base');
  const found: string[] = [];
  for (const file of files) {
    const lines = readFileSync(file, 'utf8').split('\n');
    const text = lines.join('\n');
    for (const [pattern, what] of REDECLARATIONS) {
      const m = pattern.exec(text);
      if (m) found.push(`${relative(REPO_ROOT, file)}:${text.slice(0, m.index).split('\n').length}: ${what}: ${m[0]}`);
    }
  }
  assert.deepEqual(found, [], `import these from src/protocol instead:\n${found.join('\n')}`);
});
