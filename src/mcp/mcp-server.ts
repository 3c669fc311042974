/**
 * The MCP face of toolgate, built on the official SDK's server package
 * (`@modelcontextprotocol/server` v2): one McpServer per principal — a stdio
 * connection, an HTTP session, or one sessionless HTTP request — with
 *
 * - exactly one tool, `project_cli` (thin input schema, an output schema,
 *   honest annotations, a description naming the enabled skills);
 * - the enabled skills through the Skills extension and plain resources;
 * - each enabled skill as a prompt too, for hosts that surface prompts;
 * - `logging`, carrying only that principal's own calls;
 * - the tool card as an MCP App (`io.modelcontextprotocol/ui`, mcp-apps.ts), and
 *   `icons` for the server and the tool.
 *
 * Transports (mcp-stdio.ts, mcp-http.ts) decide who the principal is; this
 * file only describes what the principal is served.
 */
import { CLIENT_CAPABILITIES_META_KEY, type McpServer, type RegisteredPrompt, type ServerContext, type StandardSchemaV1, type StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { registerAppTool } from '@modelcontextprotocol/ext-apps/server';
import type { SkillCatalog } from '@modelcontextprotocol/server/ext/skills';
import { ToolProjection } from '../protocol/tool.js';
import { actionSpec } from '../protocol/action-table.js';
import { portableJsonSchema, selfContainedJsonSchema } from '../protocol/self-contained.js';
import { MAX_APPROVAL_TTL_S } from '../protocol/config.js';
import { TOOL_DESCRIPTOR } from '../sessions/initialize.js';
import { listSkills, readSkill } from '../sessions/skills.js';
import { TASK_RUN_META_KEY, callProjectCli, type McpCallDeps, type McpPrincipal } from './mcp-tool.js';
import { declaresFormElicitation, verifyApprovalState } from './mcp-approval.js';
import { HostAskedCalls } from './mcp-host-ask.js';
import { skillUri } from './mcp-skills.js';
import { scrubOutgoingErrors } from './mcp-error-scrub.js';
import { attachToolCardApp, toolgateIcons, TOOL_UI_META } from './mcp-apps.js';
import { TaskMcpServer } from './mcp-task-server.js';
import { McpTasks, type McpTasksDeps } from './mcp-tasks.js';
import type { Services } from '../rpc/services.js';

/** An action's own hints (the action table's); an unknown name claims nothing safe. */
const UNKNOWN_ACTION_HINTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false } as const;
const hintsOf = (action: string) => actionSpec(action)?.annotations ?? UNKNOWN_ACTION_HINTS;

/**
 * A JSON Schema as the SDK's tools/list advertises it, validated by `validate`.
 * The input schema validates nothing here, deliberately: validation is ours
 * (mcp-tool.ts) — the SDK would answer a malformed object with its own error
 * text, the model needs the structured INVALID_ACTION_INPUT projection instead.
 */
function advertised<T>(json: Record<string, unknown>, validate: StandardSchemaV1<T, T>['~standard']['validate'] = (value) => ({ value: value as T })): StandardSchemaWithJSON<T, T> {
  return {
    '~standard': {
      version: 1,
      vendor: 'toolgate',
      validate,
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}

/**
 * What `structuredContent` is: the object the text projection is the JSON of,
 * `ToolProjection` of src/protocol — advertised as one self-contained JSON
 * Schema (no `$defs`, which the SDK does not follow to see an object root),
 * with `type: "object"` stated at the root, and validated by the same zod schema.
 */
export const TOOL_OUTPUT_JSON_SCHEMA: Record<string, unknown> = { type: 'object', ...outputSchemaOf() };
/**
 * Written portably (portableJsonSchema: what MCP Inspector's `--strict` checks), and with `data`
 * declared as what it is, a JSON object: every action's data shape is one (ACTION_DATA_SHAPES,
 * checked by test/unit/mcp/mcp-output-schema.test.ts), while the zod declaration keeps it `unknown`.
 */
function outputSchemaOf(): Record<string, unknown> {
  const schema = portableJsonSchema(selfContainedJsonSchema(ToolProjection)) as { anyOf: Array<{ properties: { data?: Record<string, unknown> } }> };
  const ok = schema.anyOf.find((branch) => branch.properties.data !== undefined);
  if (!ok) throw new Error('ToolProjection has no branch with data');
  ok.properties.data = { type: 'object', additionalProperties: true, ...ok.properties.data };
  return schema;
}
const ToolOutputSchema = advertised<ToolProjection>(TOOL_OUTPUT_JSON_SCHEMA, (value) => ToolProjection['~standard'].validate(value));

export function toolDescription(enabledSkills: readonly string[]): string {
  const skills = enabledSkills.length
    ? `Enabled skills: ${enabledSkills.join(', ')}. Before calling an action, read its skill: the resource ` +
      `${enabledSkills.map(skillUri).join(', ')} (resources/read, or skills/get with the Skills extension), ` +
      'or the prompt of the same name. '
    : 'No skills are enabled for this agent. ';
  return `${TOOL_DESCRIPTOR.description} ${skills}The result text is the JSON of structuredContent.`;
}

/**
 * The one tool's hints, from those of the session's actions (the action
 * table): read-only when every action is, destructive when one is,
 * idempotent when every action is and the tool is not read-only (MCP gives
 * `idempotentHint` meaning only then).
 */
export function toolAnnotations(allowedActions: readonly string[]) {
  const readOnlyHint = allowedActions.every((a) => hintsOf(a).readOnlyHint);
  return {
    title: 'Project actions',
    readOnlyHint,
    destructiveHint: allowedActions.some((a) => hintsOf(a).destructiveHint),
    idempotentHint: !readOnlyHint && allowedActions.every((a) => hintsOf(a).idempotentHint),
    openWorldHint: false,
  };
}

/**
 * Whether the host can ask its user about a call awaiting approval: it
 * declared form elicitation — per request on 2026-07-28, at initialize
 * before — and the call is no task's (a task reports `input_required`).
 */
function hostCanElicit(server: TaskMcpServer, ctx: ServerContext): boolean {
  if ((ctx.mcpReq._meta as Record<string, unknown> | undefined)?.[TASK_RUN_META_KEY] === true) return false;
  const perRequest = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY];
  return declaresFormElicitation((perRequest ?? server.server.getClientCapabilities()) as Parameters<typeof declaresFormElicitation>[0]);
}

/** What one MCP server needs: the tool call's deps, the tasks', the version it names and the store its states verify against. */
export interface McpServerDeps extends McpCallDeps {
  services: McpCallDeps['services'] & McpTasksDeps & Pick<Services, 'version' | 'store' | 'sessions'>;
}

export interface McpServerOptions {
  /**
   * The server lives on (stdio, a 2025-11-25 HTTP session) and follows its session through configuration
   * reloads (SIGHUP): its tool's description and hints, its prompts and — its catalog being the session's
   * own (`SkillCatalogs.live`) — its skill resources; each list that changed is announced (`listChanged`).
   * A server built for one request (2026-07-28 over HTTP) is built from the session as it is then.
   */
  followReloads?: boolean;
}

/** What a session's MCP server shows of it: its skills and its actions. */
const shownLists = (session: McpPrincipal['session']) => JSON.stringify([session.enabledSkills, session.allowedActions]);

export function buildMcpServer(deps: McpServerDeps, principal: McpPrincipal, catalog: SkillCatalog, opts: McpServerOptions = {}): McpServer {
  const { session } = principal;
  const icons = toolgateIcons();
  const listChanged = opts.followReloads === true;
  // Task-augmented tools/call and tasks/* (contract section 18) on top of the SDK's server: mcp-task-server.ts.
  const server = new TaskMcpServer(
    { name: 'toolgate', version: deps.services.version, icons: icons.server },
    {
      capabilities: { tools: { listChanged }, resources: { listChanged }, prompts: { listChanged }, logging: {} },
      instructions: toolDescription(session.enabledSkills),
      // The retry of a call its host asked about names the call in a state the daemon signed (mcp-approval.ts).
      requestState: { verify: (state: string) => verifyApprovalState(deps.services.store, state) },
      // 2025-11-25: the SDK asks the host itself (elicitation/create) and waits for the person; a call may wait
      // for its decision up to approval.ttl_s (at most a day), not the shim's 10-minute default.
      inputRequired: { roundTimeoutMs: MAX_APPROVAL_TTL_S * 1000 },
    },
  );

  // registerAppTool: the SDK's registerTool, with `_meta.ui` also written under the older flat key.
  // Its config type predates `icons` (2025-11-25): they are set on the registered tool, before connecting.
  const tool = registerAppTool(
    server,
    TOOL_DESCRIPTOR.name,
    {
      title: 'Project actions',
      description: toolDescription(session.enabledSkills),
      inputSchema: advertised(TOOL_DESCRIPTOR.input_schema as unknown as Record<string, unknown>),
      outputSchema: ToolOutputSchema,
      annotations: toolAnnotations(session.allowedActions),
      _meta: TOOL_UI_META,
    },
    (args: unknown, ctx) => callProjectCli(deps, principal, args, ctx, { canElicit: hostCanElicit(server, ctx) }),
  );
  tool.update({ icons: icons.tool });
  // 2025-11-25: the tool may be called as a task (registerTool takes no `execution`; the SDK drops it on 2026-07-28).
  tool.execution = { taskSupport: 'optional' };

  new McpTasks(deps.services, principal, deps.track).install(server.server);
  // 2025-11-25: a call decided elsewhere while its host's user is asked answers then (mcp-host-ask.ts).
  server.server.followAsked(new HostAskedCalls(deps.services, session.userId));
  catalog.attach(server);
  attachToolCardApp(server);

  const skills = listSkills(session).skills;
  if (skills.length === 0) {
    // The prompts capability is declared: with no skill to offer, prompts/list still answers (an empty list).
    // The SDK installs its prompt handlers with the first prompt; this one is removed at once.
    server.registerPrompt('none', { description: 'none' }, () => ({ messages: [] })).remove();
  }
  const prompts = new Map<string, RegisteredPrompt>();
  const registerSkillPrompt = ({ name, description }: { name: string; description: string }) =>
    prompts.set(
      name,
      server.registerPrompt(name, { title: `Skill: ${name}`, description }, () => ({
        description,
        messages: [
          {
            role: 'user' as const,
            content: { type: 'resource' as const, resource: { uri: skillUri(name), mimeType: 'text/markdown', text: readSkill(session, name, undefined).content } },
          },
        ],
      })),
    );
  for (const skill of skills) registerSkillPrompt(skill);

  if (opts.followReloads) {
    let shown = shownLists(session);
    const warn = (what: string, err: unknown) => deps.services.log.log('warn', what, { err: (err as Error).message });
    const stop = deps.services.sessions.onReload(() => {
      const next = shownLists(session);
      if (next === shown) return;
      // Each of these tells a connected client (tools/list_changed, prompts/list_changed, resources/list_changed).
      catalog.reload().catch((err: unknown) => warn('skill catalog reload failed; it lists the skills it had', err));
      try {
        tool.update({ description: toolDescription(session.enabledSkills), annotations: toolAnnotations(session.allowedActions) });
        const enabled = listSkills(session).skills;
        for (const [name, prompt] of prompts) {
          if (enabled.some((s) => s.name === name)) continue;
          prompt.remove();
          prompts.delete(name);
        }
        for (const skill of enabled) if (!prompts.has(skill.name)) registerSkillPrompt(skill);
        // Only once applied: a reload that could not be is tried again by the next one, even with the same lists.
        shown = next;
      } catch (err) {
        // A skill folder unreadable now: what could not change stays as it was; its calls follow the reload all the same.
        warn('mcp server could not follow the reload of its skills', err);
      }
    });
    deps.services.sessions.onEnd(session.id, stop);
  }
  return scrubOutgoingErrors(server, deps.services.secrets ?? []);
}
