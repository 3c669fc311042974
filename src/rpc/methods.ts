/**
 * Every request's params schema, for the dispatcher. They are declared once,
 * with their results, in src/protocol; this module only names them for the
 * rpc layer.
 */
export {
  InitializeParams,
  SessionOpenParams,
  ToolArgs,
  ToolInvokeParams,
  WorkerOutput,
  MessageAppendParams,
  HistoryGetParams,
  ThreadListParams,
  SkillsListParams,
  SkillsReadParams,
  ShutdownParams,
  ThreadSubscribeParams,
  CallGetParams,
  CallCancelParams,
  CallApproveParams,
  CallDenyParams,
} from '../protocol/methods.js';
export { MAX_JSON_DEPTH, jsonDepthExceeds } from '../protocol/json.js';
