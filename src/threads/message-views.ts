/**
 * What the consumers of a stored message send, computed once per message:
 * its ToolAgentOutput (parsed from the metadata at most once — never, for a
 * call this daemon just stored: the live path hands over the object it
 * built), its compiled `ui_schema` (kept in the UI cache, which history, the
 * notifications and AG-UI streams share) and its `tool/result`
 * notifications (shared params: serialized once for every connection,
 * src/runtime/peer.ts).
 *
 * Views are keyed by the row object the thread-event bus hands to every
 * listener, so one published message is encoded once however many
 * subscribers and streams it reaches; a row read again from the store gets
 * a view of its own, its `ui_schema` still from the cache. Values are
 * shared, never mutated.
 */
import { notificationsFor, type ToolAgentOutput, type ToolResultNotification } from '../codec/tool-output.js';
import { deriveUiHints } from '../codec/ui-hints.js';
import type { MessageRow } from '../store/store.js';
import { shareParams } from '../runtime/peer.js';
import type { UiCache } from './ui-cache.js';
import { compileStoredUi } from './ui.js';

interface View {
  /** null: the row holds no usable tool output. */
  output?: ToolAgentOutput | null;
  notifications?: readonly ToolResultNotification[];
}

const views = new WeakMap<MessageRow, View>();

function viewOf(row: MessageRow): View {
  let view = views.get(row);
  if (!view) views.set(row, (view = {}));
  return view;
}

/** The live path's own output for the row it just stored: nothing is parsed back. */
export function seedOutput(row: MessageRow, output: ToolAgentOutput): void {
  viewOf(row).output = output;
}

/** A tool message's ToolAgentOutput (parsed once per row); null for other messages and broken rows. */
export function outputOf(row: MessageRow): ToolAgentOutput | null {
  const view = viewOf(row);
  if (view.output !== undefined) return view.output;
  let output: ToolAgentOutput | null = null;
  if (row.role === 'tool') {
    try {
      output = (JSON.parse(row.metadata) as { tool_agent_output?: ToolAgentOutput }).tool_agent_output ?? null;
    } catch {
      /* a broken row yields nothing rather than an error */
    }
  }
  return (view.output = output);
}

/**
 * A tool message's final `ui_schema` (undefined when it has none): compiled
 * once per message, kept in the cache (a daemon assembled without one, as
 * some tests do, compiles it each time).
 */
export function uiSchemaOf(cache: UiCache | undefined, row: MessageRow, output: ToolAgentOutput): unknown {
  const cached = cache?.get(row.id);
  if (cached) return cached.ui_schema;
  const ui = compileStoredUi(output.ui_hints);
  cache?.set(row.id, ui === undefined ? {} : { ui_schema: ui });
  return ui;
}

/**
 * The `tool/result` notifications of a stored tool message (partials, then
 * final), built once per row with shared params; [] for other messages.
 */
export function toolResultsOf(cache: UiCache, threadId: string, row: MessageRow): readonly ToolResultNotification[] {
  const view = viewOf(row);
  if (view.notifications) return view.notifications;
  const output = outputOf(row);
  if (!output) return (view.notifications = []);
  const final = uiSchemaOf(cache, row, output);
  // The final's hints compile to the cached schema; a batch's partials compile here, once.
  const compile = (hints: unknown) => (hints === output.ui_hints ? final : compileStoredUi(hints));
  return (view.notifications = notificationsFor(threadId, output, compile, deriveUiHints).map(shareParams));
}
