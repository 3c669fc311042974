/**
 * The core of project-cli, on objects: admit a call (the action exists, the
 * credential's claims permit it, the input offers no credential, the
 * credential is bound to exactly this call), then — inside the caller's
 * unit of work — answer a recorded call from its record, or validate, run
 * the handler and record the call, so the effect and its record commit or
 * vanish together.
 *
 * `runCli` (the process boundary: argv, env, stdin, stdout) and the daemon's
 * in-process executor both call it, so their results are byte-identical.
 *
 * Trust: a signed credential (the process boundary) is verified only with
 * keys the daemon recorded in the database (`verifyCliCredential`, through the
 * store's `credentialKeys`). The in-process executor hands over claims the
 * daemon itself just issued, never a token: the daemon's own key — the one
 * `serve` records — is trusted by construction, so no key is looked up; the
 * claims still pass the same checks (`checkClaims`).
 */
import type { Store, Tx } from '../store/store.js';
import { StoreConflictError, StoreUnavailableError } from '../store/store.js';
import { argsSha256 } from '../codec/canonical-json.js';
import { offersCredential, redact, scrubCredentials } from '../codec/redact.js';
import { maskSecrets } from '../codec/secret-scan.js';
import { findMalformedString, malformedMessage } from '../codec/well-formed.js';
import { ActionError, EXIT_OK, exitCodeFor, type ToolErrorCode } from './errors.js';
import { DEFAULT_MAX_RESULT_BYTES } from '../protocol/limits.js';
import { inputJsonSchema, lookupAction } from './registry.js';
import type { ActionDefinition } from './action.js';
import { verifyCredential, type CredentialClaims } from './credential.js';
import { trustedKeys, type PinSource } from './trusted-keys.js';
import { offersCredentialInInput } from './argv.js';
import { describeIssues } from './validation.js';
import type { CliDocument } from '../protocol/cli-output.js';
import type { ToolCallArgs, ToolError } from '../protocol/tool.js';

export const CREDENTIAL_ENV = 'PROJECT_CLI_CREDENTIAL';

/** The stdout document and its error are wire shapes, declared once in src/protocol. */
export type { CliDocument };
/** A ToolError whose module/method are null when argv did not name them. */
export type { ToolError as CliError };

/** A finished call: the document, its JSON text (what project-cli prints, serialized once) and the exit code. */
export interface CoreOutcome {
  doc: CliDocument;
  stdout: string;
  exitCode: number;
}

export interface CoreCall {
  /** Claims already checked (`verifyCredential` or `checkClaims`). */
  claims: CredentialClaims;
  module: string;
  method: string;
  input: Record<string, unknown>;
  /** `argsSha256({module, method, input})` when the caller computed it already (hashed once). */
  argsSha256?: string | undefined;
  /**
   * Checks the document before it is recorded (throwing undoes the unit): the
   * daemon passes the protocol's CliDocument check for its in-process calls
   * (src/store/stored-rows.ts). project-cli passes none: its start-up builds
   * no wire schema, so its records are checked when a migration walks them.
   */
  checkRecord?: ((doc: CliDocument, stdout: string) => void) | undefined;
}

export function render(doc: CliDocument): CoreOutcome {
  const stdout = JSON.stringify(doc);
  if (doc.ok) return { doc, stdout, exitCode: EXIT_OK };
  // A failure echoes argv (module, method, a flag name in a usage message): a token there is masked.
  // Masking keeps the JSON valid — a token's span holds only base64url characters and dots — and the
  // document is the masked one too, so both executors store and send the same bytes.
  const masked = maskSecrets(stdout);
  return { doc: masked === stdout ? doc : (JSON.parse(masked) as CliDocument), stdout: masked, exitCode: exitCodeFor(doc.error.code) };
}

/**
 * Verifies a signed credential (the process boundary) with the keys the
 * daemon recorded in this store — an env/file key may only pin one of them.
 * Throws CredentialError.
 */
export async function verifyCliCredential(store: Pick<Store, 'read'>, token: string, pin: PinSource): Promise<CredentialClaims> {
  return verifyCredential(token, await trustedKeys(store, pin));
}

export function coreFailure(module: string | null, method: string | null, code: ToolErrorCode, message: string, extra: Record<string, unknown> = {}): CoreOutcome {
  return render({ ok: false, module, method, error: { code, message, module, method, ...extra } });
}

/** The action, if it exists and the credential permits it; else the refusal. */
export function admitAction(claims: CredentialClaims, module: string, method: string): ActionDefinition | CoreOutcome {
  const action = lookupAction(module, method);
  // Both refusals name what this credential may run (as the daemon's name the session's), so whoever
  // runs project-cli by hand can correct the call in one step; through the daemon they never occur.
  if (!action) return coreFailure(module, method, 'UNKNOWN_ACTION', `unknown action ${module}.${method}: run one of error.allowed_actions`, permitted(claims));
  if (!claims.actions.includes(`${module}.${method}`)) {
    return coreFailure(module, method, 'ACTION_NOT_ALLOWED', `the credential does not permit ${module}.${method}: it permits only error.allowed_actions`, permitted(claims));
  }
  return action;
}

/** The credential's actions that exist. */
function permitted(claims: CredentialClaims): { allowed_actions: string[] } {
  return { allowed_actions: claims.actions.filter((a) => lookupAction(...(a.split('.', 2) as [string, string])) !== undefined) };
}

/** A refusal when the input offers a credential or the credential was issued for another call; else null. */
export function admitInput(call: CoreCall): CoreOutcome | null {
  const { module, method, input, claims } = call;
  if (offersCredentialInInput(input)) {
    return coreFailure(module, method, 'UNAUTHENTICATED', `the credential is accepted only from the ${CREDENTIAL_ENV} environment variable`);
  }
  // Before anything is recorded: a NUL or a lone surrogate cannot be stored as it is on every engine.
  const malformed = malformedInput(input, module, method);
  if (malformed) return render(malformed);
  if (claims.call && claims.call.args_sha256 !== (call.argsSha256 ?? argsSha256({ module, method, input }))) {
    return coreFailure(module, method, 'UNAUTHENTICATED', 'the credential was issued for another call');
  }
  return null;
}

/** The daemon's admission of a call, decided once, before any credential is issued (`admitCall`). */
export type Admission =
  /** `name`: the action's `module.method`, made once for everything after admission (metrics, approval, limits). */
  | { admitted: true; action: ActionDefinition; name: string }
  /**
   * `args` is what may be echoed: a copy with every credential masked when
   * the input offered one. `kept`: the refusal is stored like any outcome
   * (the whitelist's); a credential in the input is never stored.
   */
  | { admitted: false; doc: CliDocument; args: ToolCallArgs; kept: boolean };

/**
 * The daemon's side of the boundary, once per call: the input offers no
 * credential (a credential field, or a token or configured secret anywhere
 * in the args — refused, and only a masked copy is ever echoed), the action
 * exists and the session's whitelist has it. An admitted call is run by
 * `execute` (in process) or by project-cli (which admits again: it is a
 * process of its own and trusts nobody's check).
 *
 * `screened`: the caller's one walk of the request (src/codec/screen.ts)
 * found no token, configured secret, credential field or malformed string
 * anywhere in `args` — neither check here can refuse, so neither walks them
 * again.
 */
export function admitCall(
  allowedActions: readonly string[],
  args: ToolCallArgs,
  secrets: readonly string[] = [],
  screened = false,
): Admission {
  const { module, method } = args;
  if (!screened && offersCredential(args, secrets)) {
    const masked = scrubCredentials(args, secrets);
    const message = 'the tool input carries a bearer token or credential; it is accepted only by the daemon, never in the input';
    return { admitted: false, kept: false, args: masked, doc: refusal(masked.module, masked.method, 'UNAUTHENTICATED', message) };
  }
  // Checked once, here, for both executors and both engines: refused, never stored (nor rewritten).
  const malformed = screened ? null : malformedArgs(args);
  if (malformed) return { admitted: false, kept: false, args, doc: malformed };
  const action = lookupAction(module, method);
  // Both answers name what this session may call, so the model can correct itself in one step.
  const allowed = { allowed_actions: allowedActions };
  if (!action) return { admitted: false, kept: true, args, doc: refusal(module, method, 'UNKNOWN_ACTION', `unknown action ${module}.${method}: call one of error.allowed_actions`, allowed) };
  const name = `${module}.${method}`;
  if (!allowedActions.includes(name)) {
    return { admitted: false, kept: true, args, doc: refusal(module, method, 'ACTION_NOT_ALLOWED', `${name} is not allowed for this session: it may call only error.allowed_actions`, allowed) };
  }
  return { admitted: true, action, name };
}

/**
 * The refusal of args holding a string no engine stores as it is (U+0000, an
 * unpaired surrogate), naming the field; null when every string is well-formed.
 */
function malformedArgs(args: ToolCallArgs): CliDocument | null {
  const found = findMalformedString(args.module, 'module') ?? findMalformedString(args.method, 'method');
  if (found) return invalidStrings(null, null, found);
  return malformedInput(args.input, args.module, args.method);
}

function malformedInput(input: Record<string, unknown>, module: string | null = null, method: string | null = null): CliDocument | null {
  const found = findMalformedString(input, 'input');
  return found ? invalidStrings(module, method, found) : null;
}

function invalidStrings(module: string | null, method: string | null, found: { path: string; reason: string }): CliDocument {
  const message = `invalid input: ${malformedMessage(found)}`;
  return { ok: false, module, method, error: { code: 'INVALID_ACTION_INPUT', message, module, method, issues: [{ path: found.path, message: found.reason }] } };
}

/** A failure decided before anything ran (its text is the daemon's own: nothing to mask). */
function refusal(module: string, method: string, code: ToolErrorCode, message: string, extra: Record<string, unknown> = {}): CliDocument {
  return { ok: false, module, method, error: { code, message, module, method, ...extra } };
}

export function isAction(a: ActionDefinition | CoreOutcome): a is ActionDefinition {
  return 'run' in a;
}

/**
 * Runs an admitted call in the caller's unit: a recorded call answers from
 * its record without running; otherwise validate, run, record.
 */
export async function execute(tx: Tx, action: ActionDefinition, call: CoreCall): Promise<CoreOutcome> {
  const { module, method } = action;
  const { claims, input } = call;
  const bound = claims.call;
  const recorded = await recordedOutcome(tx, action, call);
  if (recorded) return recorded;
  const outcome = await runAction(tx, action, claims, input);
  if (bound) {
    call.checkRecord?.(outcome.doc, outcome.stdout);
    // A StoreConflictError here (another process recorded this call first) undoes the unit; the caller reads the winner.
    await tx.toolCalls.record({
      user_id: claims.sub,
      thread_id: bound.thread_id,
      tool_call_id: bound.tool_call_id,
      action: `${module}.${method}`,
      args: JSON.stringify({ module, method, input }),
      args_sha256: bound.args_sha256,
      outcome: outcome.stdout,
      exit_code: outcome.exitCode,
    });
  }
  return outcome;
}

/** The answer of a call already recorded under the credential's `call` key (read only), or undefined. */
export async function recordedOutcome(tx: Tx, action: ActionDefinition, call: CoreCall): Promise<CoreOutcome | undefined> {
  const bound = call.claims.call;
  if (!bound) return undefined;
  const recorded = await tx.toolCalls.get(call.claims.sub, bound.thread_id, bound.tool_call_id);
  return recorded ? answerFromRecord(recorded, bound.args_sha256, action.module, action.method) : undefined;
}

function answerFromRecord(recorded: { args_sha256: string; outcome: string; exit_code: number }, argsHash: string, module: string, method: string): CoreOutcome {
  if (recorded.args_sha256 === argsHash) {
    return { doc: JSON.parse(recorded.outcome) as CliDocument, stdout: recorded.outcome, exitCode: recorded.exit_code };
  }
  return coreFailure(module, method, 'DUPLICATE_TOOL_CALL_ID', 'this tool_call_id was already used with other arguments');
}

async function runAction(tx: Tx, action: ActionDefinition, claims: CredentialClaims, rawInput: Record<string, unknown>): Promise<CoreOutcome> {
  const { module, method } = action;
  const parsed = action.input.safeParse(rawInput);
  if (!parsed.success) {
    return coreFailure(module, method, 'INVALID_ACTION_INPUT', `invalid input for ${module}.${method}`, {
      issues: describeIssues(parsed.error),
      input_schema: inputJsonSchema(action),
    });
  }
  try {
    // A savepoint: a handler that fails leaves none of its writes behind (the record still commits).
    const data = await tx.savepoint(async (t) => {
      await t.users.ensure(claims.sub);
      return action.run({ tx: t, userId: claims.sub, jobId: claims.job_id ?? null }, parsed.data);
    });
    return boundedResult(module, method, data, claims.max_result_bytes ?? DEFAULT_MAX_RESULT_BYTES);
  } catch (err) {
    if (err instanceof ActionError) {
      const extra = err.code === 'INVALID_ACTION_INPUT' ? { input_schema: inputJsonSchema(action) } : {};
      return render({ ok: false, module, method, error: { ...err.details, ...extra, code: err.code, message: err.message, module, method } });
    }
    // A conflict is answered by the caller from the winner; a lost database fails the whole unit (retry is safe).
    if (err instanceof StoreConflictError || err instanceof StoreUnavailableError) throw err;
    process.stderr.write(`${JSON.stringify(redact({ level: 'error', msg: 'handler failed', action: `${module}.${method}`, err }))}\n`);
    return coreFailure(module, method, 'INTERNAL', 'internal error');
  }
}

/**
 * The projection the daemon makes of a success document is the same JSON with
 * `"status":"success"` (or `"partial"`) where the document has `"ok":true`:
 * exactly this many bytes longer (src/codec/tool-output.ts `projectionOf`).
 */
const PROJECTION_OVERHEAD_BYTES = '"status":"success"'.length - '"ok":true'.length;

/**
 * A success, unless its projection would exceed `maxBytes`: then the failure
 * RESULT_TOO_LARGE, decided before anything is recorded — the result is
 * never cut, the model narrows the request or pages it.
 */
function boundedResult(module: string, method: string, data: unknown, maxBytes: number): CoreOutcome {
  const outcome = render({ ok: true, module, method, data });
  const bytes = Buffer.byteLength(outcome.stdout, 'utf8') + PROJECTION_OVERHEAD_BYTES;
  if (bytes <= maxBytes) return outcome;
  return coreFailure(module, method, 'RESULT_TOO_LARGE', `the result is ${bytes} bytes, more than the ${maxBytes} a result may have: narrow the request (a key, a shorter range) or page it with a smaller limit and next_cursor`, {
    result_bytes: bytes,
    max_result_bytes: maxBytes,
  });
}
