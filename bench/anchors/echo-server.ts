/**
 * Anchor (a): a bare vscode-jsonrpc server on stdio (LSP framing) that answers
 * `tool/invoke` with its params — the transport's ceiling.
 *
 * It also answers `history/raw` for the history entry (f): the raw SELECT of a
 * thread's newest rows from a database file, returned as they are (vscode-jsonrpc
 * does the JSON.stringify), so toolgate's `history/get` is compared with the
 * bare SELECT over the very same transport.
 */
import Database from 'better-sqlite3';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';

const rpc = createMessageConnection(new StreamMessageReader(process.stdin), new StreamMessageWriter(process.stdout));
rpc.onRequest('tool/invoke', (params: unknown) => params);

// The rows a page of history is made of, newest first by the thread's index
// (the bench passes the SELECT that fits the schema it finds).
let raw: { db: Database.Database; select: Database.Statement } | undefined;
rpc.onRequest('history/raw', (params: { db: string; sql: string; args: unknown[] }) => {
  raw ??= (() => {
    const db = new Database(params.db, { readonly: true });
    return { db, select: db.prepare(params.sql) };
  })();
  return { messages: raw.select.all(...params.args) };
});
rpc.onNotification('exit', () => process.exit(0));
process.stdin.on('end', () => process.exit(0));
rpc.listen();
