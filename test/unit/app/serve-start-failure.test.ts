/**
 * `serve` listens for SIGHUP from its first line, so a reload sent while the
 * daemon starts never ends it (config-reload.test.ts). A start that fails
 * must take that listener away again: a process that goes on (an embedding
 * host, a supervisor retrying in process) must not keep swallowing SIGHUP.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { serve } from '../../../src/app/serve.js';
import { serveOptionsOf } from '../../../src/app/cli.js';
import { ConfigError } from '../../../src/config/config-error.js';
import { tempDir } from '../../helpers/repo.js';

test('a serve whose start throws leaves no SIGHUP listener behind', async () => {
  const dir = tempDir();
  // serve --mcp without TOOLGATE_MCP_TOKEN: refused while the daemon is being built.
  const opts = serveOptionsOf(['--mcp', '--db', join(dir, 'toolgate.db')], { TOOLGATE_HOME: dir });
  assert.ok(opts);
  const before = process.listenerCount('SIGHUP');
  await assert.rejects(serve(opts), ConfigError);
  assert.equal(process.listenerCount('SIGHUP'), before);
});

/**
 * Refused once the daemon is built — its port taken, its MCP token expired —
 * the start undoes what it made: the database closed (SQLite removes the WAL
 * when its last connection closes), no signal listener left, nothing running
 * that keeps the process alive.
 */
test('a serve refused after the daemon was built closes its store and leaves no signal listener', async (t) => {
  const holder: Server = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.after(() => holder.close());
  const port = (holder.address() as AddressInfo).port;
  const secret = 'start-failure-bearer-secret-0123456789abcdef';
  const expired = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('u1').setIssuedAt(1_577_836_800).setExpirationTime(1_577_837_400).sign(new TextEncoder().encode(secret));
  const cases = [
    { args: ['--ws', '--port', String(port)], env: {}, refusal: /EADDRINUSE/ },
    { args: ['--mcp'], env: { TOOLGATE_MCP_TOKEN: expired }, refusal: /TOOLGATE_MCP_TOKEN: bearer token refused: expired/ },
  ];
  for (const c of cases) {
    const dir = tempDir();
    const db = join(dir, 'toolgate.db');
    const opts = serveOptionsOf([...c.args, '--db', db, '--executor', 'subprocess'], { TOOLGATE_HOME: dir, TOOLGATE_BEARER_SECRET: secret, TOOLGATE_LOG_LEVEL: 'error', ...c.env });
    assert.ok(opts);
    const signals = ['SIGHUP', 'SIGTERM', 'SIGINT'] as const;
    const before = signals.map((s) => process.listenerCount(s));
    await assert.rejects(serve(opts, () => {}), c.refusal);
    assert.deepEqual(signals.map((s) => process.listenerCount(s)), before, `${c.args[0]}: signal listeners left behind`);
    assert.ok(existsSync(db), `${c.args[0]}: the daemon was built`);
    assert.equal(existsSync(`${db}-wal`), false, `${c.args[0]}: the database is still open`);
  }
});
