/**
 * An MCP host asked for a person's decision on a call awaiting approval
 * (contract section 17), when it can answer: a `tools/call` of an `ask`
 * action from a client that declared form elicitation ends at once with an
 * `input_required` result — one embedded `elicitation/create` (`approval`)
 * showing the exact arguments, and a `requestState` the daemon signed that
 * names the call. The host's retry carries the person's answer: accept
 * approves the call, decline denies it, cancel cancels it, and the retry is
 * answered with the outcome. On 2025-11-25 the SDK's legacy shim turns the
 * same result into a real `elicitation/create` request and calls the tool
 * again with the answer, so both revisions run this one path.
 *
 * The state is a JWS (jose, flattened, base64url-wrapped so that it is one
 * opaque run no secret scanner takes for a token) signed with the daemon's
 * credential signing key; any daemon on the database verifies it with the
 * public keys recorded there (`credential_keys`), so a retry may reach
 * another daemon behind a balancer. It binds the user, the call and its
 * args digest: a retry by another user, or with other arguments, is refused
 * and decides nothing.
 */
import { FlattenedSign, flattenedVerify, decodeProtectedHeader, importJWK, type FlattenedJWSInput, type JWK } from 'jose';
import { inputRequired, inputResponse, type InputRequest, type InputRequiredResult } from '@modelcontextprotocol/server';
import type { ToolApprovalNotification } from '../protocol/methods.js';
import type { SigningKey } from '../auth/credential-issuer.js';
import type { Store } from '../store/store.js';

/** The embedded request's key in `inputRequests` / `inputResponses`. */
export const APPROVAL_INPUT_KEY = 'approval';
/** The JWS `typ` of a request state: nothing else the daemon signs carries it. */
const STATE_TYPE = 'toolgate-approval-state';
/** A state stays valid this long past its call's `expires_at` (a late retry still learns the APPROVAL_EXPIRED outcome). */
const STATE_GRACE_S = 3600;
/** The largest request state read (ours are well under 1 KiB). */
const MAX_STATE_CHARS = 4096;

/** What a request state names: the call a retry answers for. */
export interface ApprovalState {
  /** The user the call belongs to. */
  u: string;
  /** Thread, tool call id and args digest of the call. */
  t: string;
  c: string;
  a: string;
  /** Seconds since the epoch after which the state is refused. */
  exp: number;
}

/** Signs the state of the call `n` asks about. */
export async function mintApprovalState(key: SigningKey, userId: string, n: ToolApprovalNotification): Promise<string> {
  const state: ApprovalState = { u: userId, t: n.thread_id, c: n.tool_call_id, a: n.args_sha256, exp: Math.floor(Date.parse(n.expires_at) / 1000) + STATE_GRACE_S };
  const jws = await new FlattenedSign(new TextEncoder().encode(JSON.stringify(state)))
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: STATE_TYPE })
    .sign(key.privateKey);
  return Buffer.from(JSON.stringify(jws)).toString('base64url');
}

/**
 * The SDK's `requestState.verify` hook: the state's payload when a key this
 * database records signed it and it has not expired; throws otherwise (the
 * SDK answers -32602 "Invalid or expired requestState").
 */
export async function verifyApprovalState(store: Pick<Store, 'read'>, text: string): Promise<ApprovalState> {
  if (typeof text !== 'string' || text.length > MAX_STATE_CHARS || !/^[A-Za-z0-9_-]+$/.test(text)) throw new Error('malformed');
  let jws: FlattenedJWSInput;
  try {
    jws = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as FlattenedJWSInput;
  } catch {
    throw new Error('malformed');
  }
  const header = decodeProtectedHeader(jws);
  if (header.typ !== STATE_TYPE || typeof header.kid !== 'string') throw new Error('malformed');
  const recorded = (await store.read((tx) => tx.credentialKeys.list())).find((k) => k.kid === header.kid);
  if (!recorded) throw new Error('unknown key');
  const alg = header.alg === 'EdDSA' || header.alg === 'ES256' ? header.alg : null;
  if (!alg) throw new Error('malformed');
  const { payload } = await flattenedVerify(jws, await importJWK(recorded.publicJwk as JWK, alg), { algorithms: [alg] });
  const state = JSON.parse(new TextDecoder().decode(payload)) as Partial<ApprovalState>;
  const fields = [state.u, state.t, state.c, state.a];
  if (!fields.every((f) => typeof f === 'string') || typeof state.exp !== 'number') throw new Error('malformed');
  if (state.exp * 1000 < Date.now()) throw new Error('expired');
  return state as ApprovalState;
}

/**
 * The call a request state of ours names, read without verifying: only for
 * a state this daemon has just minted (the open question of a request it
 * serves), never for one a client sent — those go through verifyApprovalState.
 */
export function stateCallOf(text: string): { threadId: string; toolCallId: string } | undefined {
  try {
    const jws = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { payload?: unknown };
    if (typeof jws.payload !== 'string') return undefined;
    const state = JSON.parse(Buffer.from(jws.payload, 'base64url').toString('utf8')) as Partial<ApprovalState>;
    return typeof state.t === 'string' && typeof state.c === 'string' ? { threadId: state.t, toolCallId: state.c } : undefined;
  } catch {
    return undefined;
  }
}

/** What the person is asked about: the action, its exact input, and when the request expires. */
export interface ApprovalQuestion {
  action: string;
  input: unknown;
  expiresAt: string;
}

/** The form `elicitation/create` that asks about a call, as an embedded input request. */
export function approvalInputRequest(q: ApprovalQuestion): InputRequest {
  const message =
    `Approve ${q.action}? It runs only if you accept; decline denies it, cancel cancels it. ` +
    `Arguments: ${JSON.stringify(q.input)}. The request expires at ${q.expiresAt}.`;
  return inputRequired.elicit({ mode: 'form', message, requestedSchema: { type: 'object', properties: {} } });
}

/** The `input_required` result asking the host's user about the call `n`. */
export function askHostResult(n: ToolApprovalNotification, requestState: string): InputRequiredResult {
  const question = { action: n.action, input: n.tool_call_args.input, expiresAt: n.expires_at };
  return inputRequired({ inputRequests: { [APPROVAL_INPUT_KEY]: approvalInputRequest(question) }, requestState });
}

/** The person's answer in `inputResponses` (a retry's, or `tasks/update`'s): approve, deny, cancel — or none. */
export function hostDecisionOf(inputResponses: Record<string, unknown> | undefined): 'approve' | 'deny' | 'cancel' | null {
  const view = inputResponse(inputResponses, APPROVAL_INPUT_KEY);
  if (view.kind !== 'elicit') return null;
  return view.action === 'accept' ? 'approve' : view.action === 'decline' ? 'deny' : 'cancel';
}

/** Whether the client can show a form elicitation: declared per request (2026-07-28) or at initialize (2025). */
export function declaresFormElicitation(capabilities: { elicitation?: { form?: object; url?: object } } | undefined): boolean {
  const e = capabilities?.elicitation;
  // `elicitation: {}` is form mode (the revision before modes were named); `{url: {}}` alone is not.
  return e !== undefined && (e.form !== undefined || e.url === undefined);
}
