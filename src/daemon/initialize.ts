import type { Daemon } from './daemon.js';
import { TOOL_NAME } from '../codec/tool-output.js';

export const PROTOCOL_VERSION = '1';

/**
 * The thin tool descriptor: the model sees one tool whose input is
 * `{module, method, input}`. The action matrix is not listed — skills explain
 * the actions, and the runtime whitelist decides which may run.
 */
export const TOOL_DESCRIPTOR = {
  name: TOOL_NAME,
  description:
    'Run one whitelisted project action. Name the module and method (for example calendar.read) and pass the ' +
    'action input as an object. Read the enabled skills to learn the actions and their inputs. Failures come back ' +
    'as structured errors; INVALID_ACTION_INPUT includes the input schema to correct the call.',
  input_schema: {
    type: 'object',
    properties: {
      module: { type: 'string', description: 'module name, e.g. calendar' },
      method: { type: 'string', description: 'method name, e.g. read' },
      input: { type: 'object', description: 'the action input', additionalProperties: true },
    },
    required: ['module', 'method', 'input'],
    additionalProperties: false,
  },
} as const;

export function initializeResult(daemon: Daemon) {
  return {
    protocol_version: PROTOCOL_VERSION,
    server_info: { name: 'toolgate', version: daemon.version },
    capabilities: {
      tools: [TOOL_NAME],
      notifications: ['tool/result'],
      history_views: ['ui', 'context'],
      executor: daemon.executor.kind,
      batch_max_items: 50,
    },
    tool: TOOL_DESCRIPTOR,
  };
}
