import { readFileSync } from 'node:fs';
import type { JWK } from 'jose';
import type { Db } from '../store/database.js';
import { openDatabase } from '../store/database.js';
import { getToolCall, recordToolCall } from '../store/tool-calls.js';
import { ensureUser } from '../store/users.js';
import { argsSha256 } from '../codec/canonical-json.js';
import { ActionError, EXIT_OK, exitCodeFor, type ToolErrorCode } from './errors.js';
import { inputJsonSchema, lookupAction } from './registry.js';
import type { ActionDefinition } from './action.js';
import { CredentialError, verifyCredential, type CredentialClaims } from './credential.js';
import { UsageError, flagKinds, offersCredentialByFlag, offersCredentialInInput, parseFlags } from './argv.js';
import { describeIssues } from './validation.js';
import { redact } from '../codec/redact.js';
import type { CliDocument } from '../protocol/cli-output.js';

/** The environment variables project-cli reads — and nothing else. */
export const CLI_ENV = {
  credential: 'PROJECT_CLI_CREDENTIAL',
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

/** The stdout document and its error are wire shapes, declared once in src/protocol. */
export type { CliDocument };

const databases = new Map<string, Db>();

/** One connection per file per process: the in-process executor reuses it. */
function database(file: string): Db {
  let db = databases.get(file);
  if (!db) {
    db = openDatabase(file);
    databases.set(file, db);
  }
  return db;
}

export function closeCliDatabases(): void {
  for (const db of databases.values()) db.close();
  databases.clear();
}

/**
 * The restricted CLI as a function: argv, environment map and stdin in, one
 * JSON document and an exit code out. `bin/project-cli.mjs` and the daemon's
 * in-process executor both call this, so their results are byte-identical.
 */
export async function runCli(inv: CliInvocation): Promise<CliOutcome> {
  const [module = null, method = null, ...flagArgs] = inv.argv;
  const fail = (code: ToolErrorCode, message: string, extra: Record<string, unknown> = {}): CliOutcome =>
    render({ ok: false, module, method, error: { code, message, module, method, ...extra } });

  if (offersCredentialByFlag(inv.argv)) {
    return fail('UNAUTHENTICATED', `the credential is accepted only from the ${CLI_ENV.credential} environment variable`);
  }
  if (module === null || method === null || module.startsWith('-') || method.startsWith('-')) {
    return fail('INVALID_ACTION_INPUT', 'usage: project-cli <module> <method> [--field value ...] (large input as JSON on stdin)');
  }

  const token = inv.env[CLI_ENV.credential];
  if (!token) return fail('UNAUTHENTICATED', `no credential: set ${CLI_ENV.credential}`);
  let claims: CredentialClaims;
  try {
    claims = await verifyCredential(token, loadVerifyKey(inv));
  } catch (err) {
    if (err instanceof CredentialError) return fail('UNAUTHENTICATED', err.message);
    throw err;
  }

  const action = lookupAction(module, method);
  if (!action) return fail('UNKNOWN_ACTION', `unknown action ${module}.${method}`);
  if (!claims.actions.includes(`${module}.${method}`)) {
    return fail('ACTION_NOT_ALLOWED', `the credential does not permit ${module}.${method}`);
  }

  let rawInput: Record<string, unknown>;
  try {
    rawInput = { ...parseStdin(inv.stdin), ...parseFlags(flagArgs, flagKinds(inputJsonSchema(action))) };
  } catch (err) {
    if (err instanceof UsageError) return fail('INVALID_ACTION_INPUT', err.message, { input_schema: inputJsonSchema(action) });
    throw err;
  }
  if (offersCredentialInInput(rawInput)) {
    return fail('UNAUTHENTICATED', `the credential is accepted only from the ${CLI_ENV.credential} environment variable`);
  }
  if (claims.call && claims.call.args_sha256 !== argsSha256({ module, method, input: rawInput })) {
    return fail('UNAUTHENTICATED', 'the credential was issued for another call');
  }

  const dbFile = inv.env[CLI_ENV.db];
  if (!dbFile) return fail('INTERNAL', `no database: set ${CLI_ENV.db}`);
  return execute(database(dbFile), action, claims, rawInput);
}

/**
 * Validates and runs the action in one IMMEDIATE transaction together with
 * the record that the call happened, so the effect and its record commit or
 * vanish together. A recorded call answers from its record without running.
 */
function execute(db: Db, action: ActionDefinition, claims: CredentialClaims, rawInput: Record<string, unknown>): CliOutcome {
  const { module, method } = action;
  const call = claims.call;
  return db.transaction((): CliOutcome => {
    if (call) {
      const recorded = getToolCall(db, call.thread_id, call.tool_call_id);
      if (recorded) {
        if (recorded.args_sha256 === call.args_sha256 && recorded.user_id === claims.sub) {
          return { stdout: recorded.outcome, exitCode: recorded.exit_code };
        }
        return render({
          ok: false, module, method,
          error: { code: 'DUPLICATE_TOOL_CALL_ID', message: 'this tool_call_id was already used with other arguments', module, method },
        });
      }
    }
    const outcome = runAction(db, action, claims, rawInput);
    if (call) {
      recordToolCall(db, {
        thread_id: call.thread_id,
        tool_call_id: call.tool_call_id,
        user_id: claims.sub,
        action: `${module}.${method}`,
        args: JSON.stringify({ module, method, input: rawInput }),
        args_sha256: call.args_sha256,
        outcome: outcome.stdout,
        exit_code: outcome.exitCode,
      });
    }
    return outcome;
  }).immediate();
}

function runAction(db: Db, action: ActionDefinition, claims: CredentialClaims, rawInput: Record<string, unknown>): CliOutcome {
  const { module, method } = action;
  const parsed = action.input.safeParse(rawInput);
  if (!parsed.success) {
    return render({
      ok: false, module, method,
      error: {
        code: 'INVALID_ACTION_INPUT',
        message: `invalid input for ${module}.${method}`,
        module, method,
        issues: describeIssues(parsed.error),
        input_schema: inputJsonSchema(action),
      },
    });
  }
  try {
    // A savepoint: a handler that fails leaves none of its writes behind.
    const data = db.transaction(() => {
      ensureUser(db, claims.sub);
      return action.run({ db, userId: claims.sub, jobId: claims.job_id ?? null }, parsed.data);
    })();
    return render({ ok: true, module, method, data });
  } catch (err) {
    if (err instanceof ActionError) {
      const extra = err.code === 'INVALID_ACTION_INPUT' ? { input_schema: inputJsonSchema(action) } : {};
      return render({ ok: false, module, method, error: { ...err.details, ...extra, code: err.code, message: err.message, module, method } });
    }
    process.stderr.write(`${JSON.stringify(redact({ level: 'error', msg: 'handler failed', action: `${module}.${method}`, err }))}\n`);
    return render({ ok: false, module, method, error: { code: 'INTERNAL', message: 'internal error', module, method } });
  }
}

function render(doc: CliDocument): CliOutcome {
  return { stdout: JSON.stringify(doc), exitCode: doc.ok ? EXIT_OK : exitCodeFor(doc.error.code) };
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

function loadVerifyKey(inv: CliInvocation): JWK {
  let text = inv.env[CLI_ENV.verifyKey];
  const file = inv.env[CLI_ENV.verifyKeyFile];
  if (!text && file) {
    try {
      text = (inv.readFile ?? defaultReadFile)(file);
    } catch {
      throw new CredentialError(`cannot read ${CLI_ENV.verifyKeyFile}`);
    }
  }
  if (!text) throw new CredentialError(`no verify key: set ${CLI_ENV.verifyKey} or ${CLI_ENV.verifyKeyFile}`);
  let jwk: JWK;
  try {
    jwk = JSON.parse(text) as JWK;
  } catch {
    throw new CredentialError('the verify key is not JWK JSON');
  }
  if (typeof jwk !== 'object' || jwk === null || 'd' in jwk) throw new CredentialError('the verify key must be a public JWK');
  return jwk;
}


function defaultReadFile(path: string): string {
  return readFileSync(path, 'utf8');
}
