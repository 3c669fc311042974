/**
 * `toolgate/client`: a typed JSON-RPC client of the toolgate daemon, over
 * stdio or WebSocket. The wire types come from `toolgate/protocol`'s source
 * (src/protocol), re-exported here so a host needs one import.
 */
export { ToolgateClient, Session, DaemonExitedError, defaultToolgateCommand, type ClientOptions, type SpawnOptions, type InitializeOptions } from './client.js';
export type { Direction, MessageTap } from './tap.js';
export { ResponseError, CancellationTokenSource, type CancellationToken, type Disposable, type Message } from 'vscode-jsonrpc/node';
export type * from '../protocol/methods.js';
export type { ToolCallArgs, ToolResponse, ToolResultNotification, ToolStatus, ToolError, ToolResult, ToolDescriptor } from '../protocol/tool.js';
export type { UiSchema } from '../protocol/ui-schema.js';
export { RpcErrorCode } from '../protocol/errors.js';
export { PROTOCOL_VERSION } from '../protocol/methods.js';
