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
import { spawn } from 'node:child_process';
import { loadSigningKey, SIGNING_KEY_FILE } from '../../../src/auth/credential-issuer.js';
import { tempDir } from '../../helpers/repo.js';

/** A private Ed25519 JWK, encoded by the generation job (not `.export()`: see the last test). */
const ed25519Jwk = () => JSON.stringify(generateKeyPairSync('ed25519', { publicKeyEncoding: { format: 'jwk' }, privateKeyEncoding: { format: 'jwk' } }).privateKey);

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
  const mine = ed25519Jwk();
  writeFileSync(join(dir, SIGNING_KEY_FILE), mine, { mode: 0o600 });
  const key = await loadSigningKey({}, dir);
  assert.equal(key.privateD, (JSON.parse(mine) as { d: string }).d);
  assert.equal(readFileSync(join(dir, SIGNING_KEY_FILE), 'utf8'), mine);
});

test('TOOLGATE_CREDENTIAL_KEY_FILE set: that key is used and nothing is written to the data folder', async () => {
  const dir = tempDir();
  const file = join(tempDir(), 'key.jwk');
  writeFileSync(file, ed25519Jwk(), { mode: 0o600 });
  await loadSigningKey({ TOOLGATE_CREDENTIAL_KEY_FILE: file }, dir);
  assert.throws(() => statSync(join(dir, SIGNING_KEY_FILE)), /ENOENT/);
});

/** The child of the test below: argv[1] is the compiled credential-issuer module, argv[2] an empty data folder. */
const GC_IN_EXPORT = `
const [moduleUrl, dir] = process.argv.slice(1);
const { loadSigningKey } = await import(moduleUrl);
const { createPublicKey } = await import('node:crypto');
let armed = false;
let hits = 0;
Object.defineProperty(Object.prototype, 'crv', {
  configurable: true,
  set(value) {
    hits += 1;
    if (armed) globalThis.gc();
    Object.defineProperty(this, 'crv', { value, enumerable: true, writable: true, configurable: true });
  },
});
// Whether this node's JWK encoding sets crv through the prototype chain at all (Node 20 does; 24 and 26
// define it on the object): an imported key's export, no generation job, no collection.
createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' }, format: 'jwk' }).export({ format: 'jwk' });
const forcible = hits > 0;
hits = 0;
armed = true;
// Nothing left to collect before the key is made: the one collection that matters is the setter's.
globalThis.gc();
const key = await loadSigningKey({}, dir);
delete Object.prototype.crv;
process.stdout.write(JSON.stringify({ forcible, collections: hits, kid: key.kid }));
`;

/*
 * Node's JWK export of a key holds the key's mutex while it allocates, and a finished key-generation job's
 * destructor takes that same mutex when the garbage collector frees the job: a collection inside the export
 * of a key whose job was already unreachable deadlocked the thread for good (a daemon starting in a fresh data
 * folder hung before it answered anything). Forced here, in a process of its own (the deadlock would hold this
 * one): the export sets the JWK's `crv` through Object.prototype, whose setter runs a full collection.
 */
test('the key made on first run survives a garbage collection inside its JWK encoding (no deadlock)', { timeout: 120_000 }, async (t) => {
  const dir = tempDir();
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--input-type=module', '-e', GC_IN_EXPORT, new URL('../../../src/auth/credential-issuer.js', import.meta.url).href, dir],
    { stdio: ['ignore', 'pipe', 'pipe'], signal: t.signal },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  assert.equal(code, 0, err);
  const { forcible, collections, kid } = JSON.parse(out) as { forcible: boolean; collections: number; kid: string };
  assert.equal((await loadSigningKey({}, dir)).kid, kid, 'the key written is the one loaded');
  if (!forcible) return t.skip(`node ${process.version} sets a JWK's crv on the object itself: no collection can be forced into the encoding from JavaScript`);
  assert.ok(collections > 0, 'the JWK encoding set crv through Object.prototype: the collection ran inside it');
});

