import { DATABASE_UNAVAILABLE_MESSAGE, StoreConflictError, StoreUnavailableError, type Store } from '../store/store.js';
import { openStore, unusableDbTarget } from '../store/open-store.js';
import { DatabaseOpenError } from '../store/database.js';
import { inputJsonSchema } from './registry.js';
import { readBoundedFile } from './bounded-file.js';
import { CredentialError, type CredentialClaims } from './credential.js';
import { UsageError, flagKinds, offersCredentialByFlag, parseFlags } from './argv.js';
import { CREDENTIAL_ENV, admitAction, admitInput, verifyCliCredential, execute, coreFailure, isAction, recordedOutcome, type CoreOutcome } from './core.js';

export type { CliDocument, CliError } from './core.js';

/** The environment variables project-cli reads — and nothing else. */
export const CLI_ENV = {
  credential: CREDENTIAL_ENV,
  verifyKey: 'PROJECT_CLI_VERIFY_KEY',
  verifyKeyFile: 'PROJECT_CLI_VERIFY_KEY_FILE',
  db: 'TOOLGATE_DB',
} as const;

export interface CliInvocation {
  /** Arguments after the program name: `<module> <method> [--flag value …]`. */
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  /** Standard input, or null when there is none (a terminal). */
  stdin: string | null;
  /** Reads a file named by PROJECT_CLI_VERIFY_KEY_FILE (injected for tests). */
  readFile?: (path: string) => string;
}

/** Exactly one JSON document for stdout, and the process exit code. */
export interface CliOutcome {
  stdout: string;
  exitCode: number;
}

const stores = new Map<string, Promise<Store>>();

/** One store (one connection) per database per process. */
function storeFor(target: string): Promise<Store> {
  let store = stores.get(target);
  if (!store) {
    // One call per process: nothing to gain from named statements (the URL may go through a pooler).
    store = openStore(target, { namedStatements: false });
    store.catch(() => stores.delete(target));
    stores.set(target, store);
  }
  return store;
}

export async function closeCliStores(): Promise<void> {
  const open = [...stores.values()];
  stores.clear();
  await Promise.allSettled(open.map(async (s) => (await s).close()));
}

/**
 * The restricted CLI as a function: argv, environment map and stdin in, one
 * JSON document and an exit code out — the thin adapter around the core
 * (`core.ts`) that `bin/project-cli.cjs` runs. The credential is a signed
 * JWT in the environment, verified only with keys the daemon recorded in the
 * database it names (an env/file verify key may only pin one of them); the
 * call runs as one transaction on the CLI's own connection.
 */
export async function runCli(inv: CliInvocation): Promise<CliOutcome> {
  let outcome: CoreOutcome;
  try {
    outcome = await run(inv);
  } catch (err) {
    // The database went away mid-call: nothing of this call committed unless its record did, and a retry is safe.
    if (!(err instanceof StoreUnavailableError)) throw err;
    const [module = null, method = null] = inv.argv;
    outcome = coreFailure(module, method, 'INTERNAL', DATABASE_UNAVAILABLE_MESSAGE);
  }
  return { stdout: outcome.stdout, exitCode: outcome.exitCode };
}

async function run(inv: CliInvocation): Promise<CoreOutcome> {
  const [module = null, method = null, ...flagArgs] = inv.argv;
  const fail = (code: Parameters<typeof coreFailure>[2], message: string, extra: Record<string, unknown> = {}) =>
    coreFailure(module, method, code, message, extra);

  if (offersCredentialByFlag(inv.argv)) {
    return fail('UNAUTHENTICATED', `the credential is accepted only from the ${CLI_ENV.credential} environment variable`);
  }
  if (module === null || method === null || module.startsWith('-') || method.startsWith('-')) {
    return fail('INVALID_ACTION_INPUT', 'usage: project-cli <module> <method> [--field value ...] (large input as JSON on stdin)');
  }

  const token = inv.env[CLI_ENV.credential];
  if (!token) return fail('UNAUTHENTICATED', `no credential: set ${CLI_ENV.credential}`);
  // The trust anchor is the database the daemon serves: it is needed before the credential is believed.
  const dbTarget = inv.env[CLI_ENV.db];
  if (!dbTarget) return fail('INTERNAL', `no database: set ${CLI_ENV.db}`);
  const notATarget = unusableDbTarget(dbTarget);
  if (notATarget) return fail('INTERNAL', `${CLI_ENV.db}: ${notATarget}`);
  let store: Store;
  try {
    // Checks the schema version; migrates only a database that is behind (a fresh file by hand).
    store = await storeFor(dbTarget);
  } catch (err) {
    // Not SQLite, unreachable, or a schema newer than this toolgate: say so, as one document.
    if (err instanceof DatabaseOpenError) return fail('INTERNAL', err.unavailable ? DATABASE_UNAVAILABLE_MESSAGE : `the database cannot be used: ${err.message}`);
    throw err;
  }
  let claims: CredentialClaims;
  try {
    claims = await verifyCliCredential(store, token, {
      inline: inv.env[CLI_ENV.verifyKey],
      file: inv.env[CLI_ENV.verifyKeyFile],
      readFile: inv.readFile ?? defaultReadFile,
      names: { inline: CLI_ENV.verifyKey, file: CLI_ENV.verifyKeyFile },
    });
  } catch (err) {
    if (err instanceof CredentialError) return fail('UNAUTHENTICATED', err.message);
    throw err;
  }

  const action = admitAction(claims, module, method);
  if (!isAction(action)) return action;

  let input: Record<string, unknown>;
  try {
    // The JSON Schema (for flag kinds) costs a few ms to derive: only when there are flags.
    const fromFlags = flagArgs.length > 0 ? parseFlags(flagArgs, flagKinds(inputJsonSchema(action))) : {};
    input = { ...parseStdin(inv.stdin), ...fromFlags };
  } catch (err) {
    if (err instanceof UsageError) return fail('INVALID_ACTION_INPUT', err.message, { input_schema: inputJsonSchema(action) });
    throw err;
  }
  const call = { claims, module, method, input };
  const refused = admitInput(call);
  if (refused) return refused;

  try {
    return await store.transaction((tx) => execute(tx, action, call));
  } catch (err) {
    // Another process recorded this very call first (our unit was undone): answer from its record.
    if (err instanceof StoreConflictError) {
      const recorded = await store.read((tx) => recordedOutcome(tx, action, call));
      if (recorded) return recorded;
    }
    throw err;
  }
}

function parseStdin(stdin: string | null): Record<string, unknown> {
  if (stdin === null || stdin.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(stdin);
  } catch {
    throw new UsageError('stdin is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UsageError('stdin must hold one JSON object');
  return value as Record<string, unknown>;
}

function defaultReadFile(path: string): string {
  return readBoundedFile(path);
}
