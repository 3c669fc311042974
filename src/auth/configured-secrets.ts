import type { BearerKeySource } from './bearer-auth.js';
import type { SigningKey } from './credential-issuer.js';

/**
 * The secrets this daemon was configured with, as text: host or model text
 * that carries one verbatim is refused (contract section 5). The bearer
 * secret (from the environment or the dev file), the service key, and the
 * private part of the credential signing key.
 */
export function configuredSecrets(env: NodeJS.ProcessEnv, bearerKeys: BearerKeySource | null, signingKey: SigningKey): string[] {
  const out = new Set<string>();
  if (bearerKeys?.kind === 'secret') out.add(new TextDecoder().decode(bearerKeys.secret));
  if (env.TOOLGATE_SERVICE_KEY) out.add(env.TOOLGATE_SERVICE_KEY);
  if (signingKey.privateD) out.add(signingKey.privateD);
  out.delete('');
  return [...out];
}
