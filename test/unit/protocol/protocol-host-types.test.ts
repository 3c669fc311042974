/**
 * Compile-time check that the host-facing types (protocol/index.d.ts, generated from schemas/ by
 * json-schema-to-typescript) and the zod-inferred types of src/protocol describe the same values:
 * each must be assignable to the other. `npm run typecheck` (and the build) fail when they drift.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as Host from 'toolgate/protocol';
import type * as P from '../../../src/protocol/index.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const checks: Array<true> = [
  true as Same<Host.ToolResponse, P.ToolResponse>,
  true as Same<Host.ToolResultNotification, P.ToolResultNotification>,
  true as Same<Host.ToolAgentOutput, P.ToolAgentOutput>,
  true as Same<Host.ToolError, P.ToolError>,
  true as Same<Host.ToolCallArgs, P.ToolCallArgs>,
  true as Same<Host.UiSchema, P.UiSchema>,
  true as Same<Host.InitializeResult, P.InitializeResult>,
  true as Same<Host.SessionOpenParams, P.SessionOpenParams>,
  true as Same<Host.SessionOpenResult, P.SessionOpenResult>,
  true as Same<Host.ToolInvokeParams, P.ToolInvokeParams>,
  true as Same<Host.HistoryGetResult, P.HistoryGetResult>,
  true as Same<Host.ThreadListResult, P.ThreadListResult>,
  true as Same<Host.SkillsReadResult, P.SkillsReadResult>,
  true as Same<Host.CliDocument, P.CliDocument>,
  true as Same<Host.ConfigFile, P.ConfigFile>,
  true as Same<Host.Event, P.Event>,
];

test('host types and zod types agree (checked by the compiler)', () => {
  assert.ok(checks.every(Boolean));
});
