import { randomUUID } from 'node:crypto';
import { AuthError, authenticateUser, type Principal, type UserAuthDeps } from '../auth/user-auth.js';
import { ConfigError } from '../config/config-error.js';
import type { Services } from '../rpc/services.js';
import type { Session, SessionSlot } from '../sessions/sessions.js';
import { profileFields } from '../sessions/session-open.js';
import type { AuthProblem } from './mcp-tool.js';

/** What MCP sessions need of the daemon: the profiles, the session registry, and token verification. */
export type McpSessionDeps = Pick<Services, 'config' | 'sessions'> & UserAuthDeps;

/** MCP sessions one user may hold open at once over HTTP; past it a new one is refused (no eviction). */
export const MAX_MCP_SESSIONS_PER_USER = 32;

/**
 * The agent profile MCP sessions use: `mcp.agent` of the config (stdio:
 * TOOLGATE_MCP_AGENT wins, it is set per host entry), else `default`.
 */
export function mcpAgentName(deps: McpSessionDeps, env?: NodeJS.ProcessEnv): string {
  return env?.TOOLGATE_MCP_AGENT ?? deps.config.mcp.agent ?? 'default';
}

/** What an MCP session of `agent` may see and run, for the principal's user, until its token's exp. */
function mcpSessionFields(deps: McpSessionDeps, principal: Pick<Principal, 'userId' | 'expiresAt'>, agent: string): Omit<Session, 'id' | 'connectionId'> {
  const profile = deps.config.agents.get(agent);
  if (!profile) throw new ConfigError(`unknown agent profile "${agent}" for MCP`);
  return {
    userId: principal.userId,
    source: 'session',
    jobId: null,
    enabledSkills: profile.enabledSkills,
    allowedActions: profile.allowedActions,
    expiresAt: principal.expiresAt,
    ...profileFields(agent, profile),
  };
}

/**
 * The session of one sessionless (2026-07-28) MCP request: it lives for that
 * request only, so it is not registered — MCP clients cannot name it.
 */
export function mcpRequestSession(deps: McpSessionDeps, principal: Pick<Principal, 'userId' | 'expiresAt'>, agent: string): Session {
  return { id: `ses_${randomUUID()}`, connectionId: 'mcp-http', ...mcpSessionFields(deps, principal, agent) };
}

/**
 * A sessionful MCP session of this user, registered on this daemon under
 * the id its client holds (`id`: the database's, mcp-http-sessions.ts). Its
 * cap per user is counted in the database, across daemons, not here; the
 * registry ends it at its token's `exp` and once unused for `idleMs`.
 */
export function registerMcpSession(deps: McpSessionDeps, id: string, principal: Pick<Principal, 'userId' | 'expiresAt'>, agent: string, idleMs: number): Session {
  const connectionId = `mcp_${randomUUID().slice(0, 8)}`;
  return deps.sessions.reserve(connectionId, undefined, { idleMs, id }).open(mcpSessionFields(deps, principal, agent));
}

function openMcpSession(deps: McpSessionDeps, slot: SessionSlot, principal: Principal, agent: string): Session {
  return slot.open(mcpSessionFields(deps, principal, agent));
}

export interface StdioPrincipal {
  session: Session;
  /** Verifies TOOLGATE_MCP_TOKEN again (its `exp` above all); why, when it no longer holds. */
  checkAuth: () => Promise<AuthProblem | null>;
}

/**
 * The one principal of `serve --mcp`: the user of the bearer token in
 * TOOLGATE_MCP_TOKEN, its session registered like any other. A missing or
 * bad token stops the server before it speaks MCP; one that expires later
 * fails each call with UNAUTHENTICATED instead. The token is never echoed.
 */
export async function openMcpStdioPrincipal(deps: McpSessionDeps, env: NodeJS.ProcessEnv): Promise<StdioPrincipal> {
  const token = env.TOOLGATE_MCP_TOKEN;
  if (!token) throw new ConfigError('serve --mcp acts for the user of a bearer token: set TOOLGATE_MCP_TOKEN');
  const agent = mcpAgentName(deps, env);
  const slot = deps.sessions.reserve('mcp-stdio');
  let principal: Principal;
  try {
    // A refusal here ends the server with its reason in one line: no log line besides.
    principal = await authenticateUser(deps, { token }, { env, logRefusal: false });
  } catch (err) {
    slot.release();
    if (err instanceof AuthError) throw new ConfigError(`TOOLGATE_MCP_TOKEN: ${err.message}`);
    throw err;
  }
  if (!deps.config.agents.has(agent)) {
    slot.release();
    throw new ConfigError(`TOOLGATE_MCP_AGENT: unknown agent profile "${agent}"`);
  }
  return {
    session: openMcpSession(deps, slot, principal, agent),
    async checkAuth() {
      try {
        await authenticateUser(deps, { token }, { env });
        return null;
      } catch (err) {
        if (err instanceof AuthError && err.reason === 'unavailable') return { message: `TOOLGATE_MCP_TOKEN: ${err.message}`, unavailable: true };
        if (err instanceof AuthError) return { message: `TOOLGATE_MCP_TOKEN: ${err.message}; start the server with a fresh token`, unavailable: false };
        throw err;
      }
    },
  };
}
