import { PROTOCOL_VERSION, type InitializeResult } from '../protocol/methods.js';
import { TOOL_INPUT_SCHEMA, TOOL_NAME, type ToolDescriptor } from '../protocol/tool.js';
import { BATCH_MAX_ITEMS } from '../protocol/actions.js';

export { PROTOCOL_VERSION };

/**
 * The thin tool descriptor: the model sees one tool whose input is
 * `{module, method, input}`. The action matrix is not listed — skills explain
 * the actions, and the runtime whitelist decides which may run.
 */
export const TOOL_DESCRIPTOR: ToolDescriptor = {
  name: TOOL_NAME,
  description:
    'Run one whitelisted project action. Name the module and method (for example calendar.read) and pass the ' +
    'action input as an object. Read the enabled skills to learn the actions and their inputs. Failures come back ' +
    'as structured errors; INVALID_ACTION_INPUT includes the input schema to correct the call.',
  input_schema: TOOL_INPUT_SCHEMA,
};

/** What `initialize` reports of the daemon. */
export interface ServerFacts {
  version: string;
  executor: { readonly kind: 'subprocess' | 'inprocess' };
}

export function initializeResult(deps: ServerFacts): InitializeResult {
  return {
    protocol_version: PROTOCOL_VERSION,
    server_info: { name: 'toolgate', version: deps.version },
    capabilities: {
      tools: [TOOL_NAME],
      notifications: ['tool/result'],
      history_views: ['ui', 'context'],
      executor: deps.executor.kind,
      batch_max_items: BATCH_MAX_ITEMS,
    },
    tool: TOOL_DESCRIPTOR,
  };
}
