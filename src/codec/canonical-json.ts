import * as crypto from 'node:crypto';

/**
 * JSON with object keys sorted at every depth, so that equal values have
 * equal bytes whatever order a client wrote their keys in.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/** The identity of a call's arguments: sha256 of their canonical JSON. */
export function argsSha256(args: unknown): string {
  const text = canonicalJson(args);
  // The one-shot `crypto.hash` (Node 20.12+) builds no Hash object: measurably cheaper on every call.
  return oneShot ? oneShot('sha256', text, 'hex') : crypto.createHash('sha256').update(text).digest('hex');
}

const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;
