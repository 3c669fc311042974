/**
 * Redaction for anything written to a log: tokens as secret-scan.ts defines
 * them (the same detection that refuses them in host and model text) and
 * values under secret-sounding keys. Pure; shared by the daemon's logger and
 * project-cli's own stderr line.
 */
import { findSecretIn, maskSecrets } from './secret-scan.js';
/** Log fields are for people: a longer string is cut (after redaction, so no token half survives). */
const MAX_STRING = 4096;
const SECRET_KEYS = /^(token|credential|secret|authorization|service_key|password|bearer_secret)$/i;
const MAX_DEPTH = 8;

/** `scheme://user:PASSWORD@host`: the password part of a URL's userinfo (greedy to the last `@` of the authority). */
const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*):[^\s/?#]*@/gi;

/** `?password=SECRET` / `&sslpassword=SECRET`: a database driver takes a URL's query parameter as a password too. */
const QUERY_PASSWORD = /([?&](?:ssl)?password=)[^&#\s]*/gi;

/** A URL's password shown as `***` (a database URL in an error or a log line). */
export function maskUrlPasswords(text: string): string {
  return text.includes('://') ? text.replace(URL_PASSWORD, '$1:***@').replace(QUERY_PASSWORD, '$1***') : text;
}

export function redact(value: unknown, depth = 0, secrets: readonly string[] = []): unknown {
  if (typeof value === 'string') {
    const clean = maskUrlPasswords(maskSecrets(value, secrets));
    return clean.length > MAX_STRING ? `${clean.slice(0, MAX_STRING)}…[${clean.length - MAX_STRING} more chars]` : clean;
  }
  if (value === null || typeof value !== 'object') return value;
  // Deeper than any log field we write: drop rather than write unredacted.
  if (depth > MAX_DEPTH) return '[truncated]';
  if (value instanceof Error) return redact(value.stack ?? value.message, depth + 1, secrets);
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1, secrets));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEYS.test(k) ? '[redacted]' : redact(v, depth + 1, secrets);
  return out;
}

/** Input fields that would carry a credential: never accepted, never stored. */
const CREDENTIAL_FIELDS: ReadonlySet<string> = new Set([
  'credential',
  'token',
  'bearer',
  'access_token',
  'api_key',
  'jwt',
  'project_cli_credential',
]);

/** Whether an input key names a credential field (any case). */
export function isCredentialField(key: string): boolean {
  return CREDENTIAL_FIELDS.has(key.toLowerCase());
}

/**
 * Whether a tool input offers a credential: a value under a credential field
 * (at any depth) or a token anywhere in its strings or keys (secret-scan.ts).
 * Such a call is refused; nothing of it is kept.
 */
export function offersCredential(value: unknown, secrets: readonly string[] = []): boolean {
  return hasCredentialField(value) || findSecretIn(value, secrets) !== null;
}

function hasCredentialField(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) stack.push(...v);
    else {
      for (const [k, x] of Object.entries(v)) {
        if (isCredentialField(k)) return true;
        stack.push(x);
      }
    }
  }
  return false;
}

/** A copy of a value with every credential field and token replaced by `[redacted]` (what a refusal may echo). */
export function scrubCredentials<T>(value: T, secrets: readonly string[] = []): T {
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return maskSecrets(v, secrets);
    if (v === null || typeof v !== 'object') return v;
    if (depth > 100) return '[truncated]';
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      out[maskSecrets(k, secrets)] = CREDENTIAL_FIELDS.has(k.toLowerCase()) ? '[redacted]' : walk(x, depth + 1);
    }
    return out;
  };
  return walk(value, 0) as T;
}

/** Longest client-supplied name an error repeats; the rest is cut. */
const MAX_ECHOED_NAME = 100;

/**
 * A name the client sent (a method, a tool, a resource URI, a key) as an
 * error may repeat it: a name that is or carries a token — whole, split or
 * padded (secret-scan.ts) — or a configured secret is `[redacted]`
 * entirely; an ordinary one is repeated, cut to MAX_ECHOED_NAME characters.
 */
export function echoName(name: string, secrets: readonly string[] = []): string {
  if (findSecretIn(name, secrets) !== null) return '[redacted]';
  return name.length > MAX_ECHOED_NAME ? `${name.slice(0, MAX_ECHOED_NAME)}…` : name;
}

/**
 * An error about to leave the daemon (message and data), with every token
 * and configured secret in it masked: the last line of defence for error
 * text that repeats what a client named (a library's "Tool X not found", a
 * schema's "Unrecognized key"). Returns the same objects when nothing was found.
 */
export function scrubError<T extends { message: string; data?: unknown }>(error: T, secrets: readonly string[] = []): T {
  const dirty = findSecretIn(error.message, secrets) !== null || (error.data !== undefined && findSecretIn(error.data, secrets) !== null);
  if (!dirty) return error;
  return {
    ...error,
    message: maskSecrets(error.message, secrets),
    ...(error.data === undefined ? {} : { data: scrubCredentials(error.data, secrets) }),
  };
}
