/** The MCP stdio line guard in process: what passes, what is refused, and where reading resumes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { McpLineGuard } from '../../../src/mcp/mcp-line-guard.js';

function run(max: number, chunks: string[]): { out: string; refused: number } {
  let refused = 0;
  const guard = new McpLineGuard({ maxMessageBytes: max, onTooLarge: () => refused++ });
  let out = '';
  guard.on('data', (c: Buffer) => (out += c.toString('utf8')));
  for (const c of chunks) guard.write(Buffer.from(c));
  guard.end();
  return { out, refused };
}

test('lines up to the cap pass untouched, however they are chunked', () => {
  assert.deepEqual(run(5, ['abcde\nab', 'cde\n', 'x\ny\n']), { out: 'abcde\nabcde\nx\ny\n', refused: 0 });
});

test('a line over the cap is refused once and dropped up to its newline; the next line passes', () => {
  assert.deepEqual(run(5, ['abcdef\nok\n']), { out: 'ok\n', refused: 1 });
  // Over the cap only across chunks: nothing of it went on (a prefix could be valid JSON by itself).
  assert.deepEqual(run(5, ['abc', 'def', 'ghi', 'jkl\nok\n']), { out: 'ok\n', refused: 1 });
  assert.deepEqual(run(5, ['{"a":', '1}   ', '  \nok\n']), { out: 'ok\n', refused: 1 });
  assert.deepEqual(run(5, ['abcdefgh', 'ij\n', 'klmnopq\n', 'ok\n']), { out: 'ok\n', refused: 2 });
});

test('a \\r before the newline is not counted (the SDK strips it), however the chunks fall', () => {
  assert.deepEqual(run(5, ['abcde\r\n']), { out: 'abcde\r\n', refused: 0 });
  assert.deepEqual(run(5, ['abcde\r', '\n', 'ok\r\n']), { out: 'abcde\r\nok\r\n', refused: 0 });
  assert.deepEqual(run(5, ['abcdef\r\n', 'ok\n']), { out: 'ok\n', refused: 1 });
  assert.deepEqual(run(5, ['abcde\r', 'x\n', 'ok\n']), { out: 'ok\n', refused: 1 });
});

test('admit sees each whole line without its line end, and may drop it', () => {
  const seen: string[] = [];
  const guard = new McpLineGuard({ maxMessageBytes: 10, onTooLarge: () => {}, admit: (l) => (seen.push(l.toString()), l.toString() !== 'drop') });
  let out = '';
  guard.on('data', (c: Buffer) => (out += c.toString('utf8')));
  for (const c of ['keep\r\ndr', 'op\nlast\n']) guard.write(Buffer.from(c));
  guard.end();
  assert.deepEqual(seen, ['keep', 'drop', 'last']);
  assert.equal(out, 'keep\r\nlast\n');
});
