/**
 * The confirmation card of a call awaiting approval (contract section 17):
 * what approving it would change, read now for the call's user — the event
 * about to be deleted, shared or changed, the memory about to be forgotten or
 * overwritten — and the call's input field by field, compiled by the same
 * compiler as every `ui_schema`. Read inside the unit that stores the
 * pending call; reads only what the call's user may see.
 */
import { eventHint, type ApprovalHints } from '../codec/ui-hints.js';
import { compileUiSchema } from '../codec/ui-schema-compiler.js';
import type { UiSchema } from '../codec/ui-schema-types.js';
import type { ToolApprovalNotification } from '../protocol/methods.js';
import type { ToolCallArgs } from '../protocol/tool.js';
import type { PendingCallRow, Tx } from '../store/store.js';

/** Input values are shown as text; a longer one is cut for the card only (the digest binds the whole). */
const MAX_VALUE_CHARS = 500;

export async function approvalCard(tx: Tx, userId: string, args: ToolCallArgs, expiresAt: string): Promise<UiSchema> {
  const action = `${args.module}.${args.method}`;
  const { input } = args;
  const eventId = args.module === 'calendar' && typeof input['event_id'] === 'string' ? input['event_id'] : undefined;
  const event = eventId ? await tx.events.getVisible(userId, eventId) : undefined;
  const key = args.module === 'memory' && typeof input['key'] === 'string' ? input['key'] : undefined;
  const memory = key !== undefined ? (await tx.memories.read(userId, key))[0] : undefined;
  const userIds = action === 'calendar.share' && Array.isArray(input['user_ids']) ? input['user_ids'].filter((u): u is string => typeof u === 'string') : null;
  const hints: ApprovalHints = {
    template: 'approval',
    action,
    event: event ? eventHint(event) : null,
    memory: memory ?? null,
    user_ids: userIds,
    input: Object.entries(input).map(([name, value]) => ({ name, value: shown(value) })),
    expires_at: expiresAt,
  };
  return compileUiSchema(hints);
}

/**
 * The `tool/approval` params of a stored call awaiting approval, its card read now: what another
 * daemon's subscribers hear of it (approval-relay.ts) and what `call/list` lists. The same value as the
 * asking daemon sent, as long as what the card shows did not change meanwhile.
 */
export async function approvalOfRow(tx: Tx, row: PendingCallRow): Promise<ToolApprovalNotification> {
  const args = JSON.parse(row.args) as ToolCallArgs;
  return {
    thread_id: row.threadId,
    tool_call_id: row.toolCallId,
    action: row.action,
    tool_call_args: args,
    args_sha256: row.argsSha256,
    expires_at: row.expiresAt,
    ui_schema: await approvalCard(tx, row.userId, args, row.expiresAt),
  };
}

function shown(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
}
