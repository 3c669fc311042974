/**
 * The package entry (`import … from 'toolgate'`): run toolgate from code as
 * the `toolgate` binary does, and the names a host may want to check against.
 * The wire types and JSON Schemas are separate entries (`toolgate/protocol`,
 * `toolgate/schemas/*.json`).
 */
export { main } from './app/cli.js';
export { serve, VERSION, DEFAULT_LIMITS, type ServeOptions, type Limits } from './app/serve.js';
export { loadConfig, DEFAULT_CONFIG, type DaemonConfig, type AgentProfile } from './config/config.js';
export { ACTION_NAMES } from './protocol/action-table.js';
export { TOOL_ERROR_CODES, type ToolErrorCode, type ToolError } from './protocol/tool.js';
