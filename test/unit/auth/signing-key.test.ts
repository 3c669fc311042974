/**
 * The credential signing key (contract §7): made on first run, 0600, in the
 * data folder — and only then. A key that exists is read, never replaced, so
 * every `project-cli` that trusts its recorded public half keeps working.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { loadSigningKey, SIGNING_KEY_FILE } from '../../../src/auth/credential-issuer.js';
import { tempDir } from '../../helpers/repo.js';

test('a signing key is made on first run (0600) and the same key is read on every later one', async () => {
  const dir = tempDir();
  const first = await loadSigningKey({}, dir);
  const path = join(dir, SIGNING_KEY_FILE);
  assert.equal(statSync(path).mode & 0o777, 0o600);
  const text = readFileSync(path, 'utf8');
  const again = await loadSigningKey({}, dir);
  assert.equal(again.kid, first.kid, 'the same key, not a new one');
  assert.equal(readFileSync(path, 'utf8'), text, 'the file is not rewritten');
});

test('a key already in the data folder is used as it is: none is generated over it', async () => {
  const dir = tempDir();
  const mine = JSON.stringify(generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }));
  writeFileSync(join(dir, SIGNING_KEY_FILE), mine, { mode: 0o600 });
  const key = await loadSigningKey({}, dir);
  assert.equal(key.privateD, (JSON.parse(mine) as { d: string }).d);
  assert.equal(readFileSync(join(dir, SIGNING_KEY_FILE), 'utf8'), mine);
});

test('TOOLGATE_CREDENTIAL_KEY_FILE set: that key is used and nothing is written to the data folder', async () => {
  const dir = tempDir();
  const file = join(tempDir(), 'key.jwk');
  writeFileSync(file, JSON.stringify(generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' })), { mode: 0o600 });
  await loadSigningKey({ TOOLGATE_CREDENTIAL_KEY_FILE: file }, dir);
  assert.throws(() => statSync(join(dir, SIGNING_KEY_FILE)), /ENOENT/);
});
