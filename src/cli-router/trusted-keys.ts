import type { JWK } from 'jose';
import type { KeyObject } from 'node:crypto';
import type { Store } from '../store/store.js';
import { CredentialError } from './credential.js';
import { publicKey } from './jws.js';

/** A key the CLI will verify credentials with, and its RFC 7638 thumbprint. */
export interface TrustedKey {
  kid: string;
  jwk: JWK;
}

export interface PinSource {
  /** PROJECT_CLI_VERIFY_KEY: a public JWK as JSON. */
  inline: string | undefined;
  /** PROJECT_CLI_VERIFY_KEY_FILE. */
  file: string | undefined;
  readFile: (path: string) => string;
  names: { inline: string; file: string };
}

/**
 * The keys project-cli trusts (contract section 6): only those the daemon
 * recorded in the database it serves. A key the caller supplies in the
 * environment or a file may only *pin* one of them; a pinned key that is not
 * recorded is refused — so a caller cannot bring their own key and sign
 * their own credential. The keys are read in one unit of their own.
 *
 * The pin matches the recorded key that is the same public key (node:crypto
 * `KeyObject.equals`), which is what equal RFC 7638 thumbprints — the
 * recorded kid — say; computing the thumbprint went through jose and
 * WebCrypto, whose loading was ~3 ms of every subprocess call's start-up.
 */
export async function trustedKeys(store: Pick<Store, 'read'>, pin: PinSource): Promise<TrustedKey[]> {
  const recorded = (await store.read((tx) => tx.credentialKeys.list())).map((k) => ({ kid: k.kid, jwk: k.publicJwk as JWK }));
  const pinned = readPinned(pin);
  if (recorded.length === 0) throw new CredentialError('no trusted key: the database records no daemon signing key (run `toolgate serve` on it)');
  if (!pinned) return recorded;
  let key: KeyObject;
  try {
    key = publicKey(pinned);
  } catch {
    throw new CredentialError('the verify key is not a valid public JWK');
  }
  const match = recorded.find((k) => sameKey(k.jwk, key));
  if (!match) throw new CredentialError('the pinned verify key is not a key the daemon recorded in this database');
  return [match];
}

function readPinned(pin: PinSource): JWK | null {
  let text = pin.inline;
  if (!text && pin.file) {
    try {
      text = pin.readFile(pin.file);
    } catch {
      throw new CredentialError(`cannot read ${pin.names.file}`);
    }
  }
  if (!text) return null;
  let jwk: unknown;
  try {
    jwk = JSON.parse(text);
  } catch {
    throw new CredentialError('the verify key is not JWK JSON');
  }
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk) || 'd' in jwk) throw new CredentialError('the verify key must be a public JWK');
  return jwk as JWK;
}

function sameKey(recorded: JWK, pinned: KeyObject): boolean {
  try {
    return publicKey(recorded).equals(pinned);
  } catch {
    return false; // a recorded key node:crypto cannot import matches no pin
  }
}
