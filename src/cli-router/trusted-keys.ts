import { calculateJwkThumbprint, type JWK } from 'jose';
import type { Store } from '../store/store.js';
import { CredentialError } from './credential.js';

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
 * their own credential. The keys are read in one unit of their own; the
 * thumbprint (async WebCrypto) is computed after it, never inside it.
 */
export async function trustedKeys(store: Pick<Store, 'read'>, pin: PinSource): Promise<TrustedKey[]> {
  const recorded = (await store.read((tx) => tx.credentialKeys.list())).map((k) => ({ kid: k.kid, jwk: k.publicJwk as JWK }));
  const pinned = readPinned(pin);
  if (recorded.length === 0) throw new CredentialError('no trusted key: the database records no daemon signing key (run `toolgate serve` on it)');
  if (!pinned) return recorded;
  let kid: string;
  try {
    kid = await thumbprint(pinned);
  } catch {
    throw new CredentialError('the verify key is not a valid public JWK');
  }
  const match = recorded.find((k) => k.kid === kid);
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

const thumbprints = new Map<string, Promise<string>>();

/** Thumbprints by JWK text: the in-process executor pins the same key on every call. */
function thumbprint(jwk: JWK): Promise<string> {
  const id = JSON.stringify(jwk);
  let t = thumbprints.get(id);
  if (!t) {
    if (thumbprints.size >= 8) thumbprints.clear();
    t = calculateJwkThumbprint(jwk);
    t.catch(() => thumbprints.delete(id));
    thumbprints.set(id, t);
  }
  return t;
}
