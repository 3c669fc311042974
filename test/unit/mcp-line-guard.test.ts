/** The MCP stdio line guard in process: what passes, what is refused, and where reading resumes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { McpLineGuard } from '../../src/rpc/mcp-line-guard.js';

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
  // Over the cap only across chunks: what went on already is ended as a line of its own (unparseable, so dropped).
  assert.deepEqual(run(5, ['abc', 'def', 'ghi', 'jkl\nok\n']), { out: 'abc\nok\n', refused: 1 });
  assert.deepEqual(run(5, ['abcdefgh', 'ij\n', 'klmnopq\n', 'ok\n']), { out: 'ok\n', refused: 2 });
});
