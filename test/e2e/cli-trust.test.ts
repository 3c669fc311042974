/**
 * Contract sections 6 and 7: project-cli trusts only the public keys the
 * daemon recorded in the database it serves. A caller who brings their own
 * key pair — signing a credential for another user and supplying the public
 * half as the verify key — is refused (exit 3); so is a pinned key the
 * daemon never recorded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT, importJWK, type JWK } from 'jose';
import Database from 'better-sqlite3';
import { startHost, openSession } from '../helpers/host.js';
import { PROJECT_CLI_BIN } from '../helpers/repo.js';
import { generateTestKeyPair, mintCredential } from '../helpers/credentials.js';
import { mintBearer } from '../helpers/tokens.js';

function cli(env: Record<string, string>): { status: number | null; doc: { ok: boolean; data?: any; error?: { code: string } } } {
  const r = spawnSync(process.execPath, [PROJECT_CLI_BIN, 'memory', 'read'], { input: '{}', env, encoding: 'utf8' });
  return { status: r.status, doc: JSON.parse(r.stdout) };
}

test('a self-signed credential with its own verify key cannot read another user’s memories; the daemon’s recorded key can', async () => {
  const host = await startHost();
  try {
    const s = await openSession(host, await mintBearer('alice'));
    const r = await host.request<{ status: string }>('tool/invoke', {
      session_id: s.session_id, thread_id: 't', tool_call_id: 'c1', args: { module: 'memory', method: 'update', input: { key: 'diary', content: 'private' } },
    });
    assert.equal(r.status, 'success');
  } finally {
    await host.stop();
  }
  const db = join(host.dataDir, 'toolgate.db');
  const rows = new Database(db, { readonly: true }).prepare('SELECT kid, public_jwk FROM credential_keys').all() as Array<{ public_jwk: string }>;
  assert.equal(rows.length, 1, 'serve recorded its signing key');
  assert.ok(!('d' in JSON.parse(rows[0]!.public_jwk)), 'only the public half');

  const attacker = await generateTestKeyPair();
  const forged = await mintCredential({ sub: 'alice', actions: ['memory.read'], key: attacker });
  for (const env of <Array<Record<string, string>>>[
    { PROJECT_CLI_CREDENTIAL: forged, PROJECT_CLI_VERIFY_KEY: JSON.stringify(attacker.publicJwk), TOOLGATE_DB: db },
    { PROJECT_CLI_CREDENTIAL: forged, TOOLGATE_DB: db },
    { PROJECT_CLI_CREDENTIAL: forged, PROJECT_CLI_VERIFY_KEY: rows[0]!.public_jwk, TOOLGATE_DB: db },
  ]) {
    const run = cli(env);
    assert.equal(run.status, 3, JSON.stringify(run.doc));
    assert.equal(run.doc.error?.code, 'UNAUTHENTICATED');
  }

  // The daemon's own key (recorded) is trusted, pinned or not.
  const jwk = JSON.parse(readFileSync(join(host.dataDir, 'credential-signing-key.jwk'), 'utf8')) as JWK;
  const genuine = await new SignJWT({ actions: ['memory.read'] })
    .setProtectedHeader({ alg: 'EdDSA' })
    .setIssuer('toolgate').setAudience('project_cli').setSubject('alice').setJti('j1').setIssuedAt().setExpirationTime('5m')
    .sign(await importJWK(jwk, 'EdDSA'));
  for (const env of <Array<Record<string, string>>>[{ PROJECT_CLI_CREDENTIAL: genuine, TOOLGATE_DB: db }, { PROJECT_CLI_CREDENTIAL: genuine, PROJECT_CLI_VERIFY_KEY: rows[0]!.public_jwk, TOOLGATE_DB: db }]) {
    const run = cli(env);
    assert.equal(run.status, 0, JSON.stringify(run.doc));
    assert.equal(run.doc.data.items[0].content, 'private');
  }
  // A pinned key that is not recorded is refused even with a genuine credential.
  const run = cli({ PROJECT_CLI_CREDENTIAL: genuine, PROJECT_CLI_VERIFY_KEY: JSON.stringify(attacker.publicJwk), TOOLGATE_DB: db });
  assert.equal(run.status, 3);
});
