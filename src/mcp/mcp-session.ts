import { randomUUID } from 'node:crypto';
import { AuthError, authenticateUser, type Principal } from '../auth/user-auth.js';
import { ConfigError } from '../config/config-error.js';
import type { Services } from '../rpc/services.js';
import type { Session, SessionSlot } from '../sessions/sessions.js';
import { profileFields } from '../sessions/session-open.js';

/** MCP sessions one user may hold open at once over HTTP; past it a new one is refused (no eviction). */
export const MAX_MCP_SESSIONS_PER_USER = 32;

/**
 * The agent profile MCP sessions use: `mcp.agent` of the config (stdio:
 * TOOLGATE_MCP_AGENT wins, it is set per host entry), else `default`.
 */
export function mcpAgentName(daemon: Services, env?: NodeJS.ProcessEnv): string {
  return env?.TOOLGATE_MCP_AGENT ?? daemon.config.mcp.agent ?? 'default';
}

/** What an MCP session of `agent` may see and run, for the principal's user, until its token's exp. */
function mcpSessionFields(daemon: Services, principal: Pick<Principal, 'userId' | 'expiresAt'>, agent: string): Omit<Session, 'id' | 'connectionId'> {
  const profile = daemon.config.agents.get(agent);
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
export function mcpRequestSession(daemon: Services, principal: Pick<Principal, 'userId' | 'expiresAt'>, agent: string): Session {
  return { id: `ses_${randomUUID()}`, connectionId: 'mcp-http', ...mcpSessionFields(daemon, principal, agent) };
}

/**
 * A sessionful MCP session of this user, registered on this daemon under
 * the id its client holds (`id`: the database's, mcp-http-sessions.ts). Its
 * cap per user is counted in the database, across daemons, not here; the
 * registry ends it at its token's `exp` and once unused for `idleMs`.
 */
export function registerMcpSession(daemon: Services, id: string, principal: Pick<Principal, 'userId' | 'expiresAt'>, agent: string, idleMs: number): Session {
  const connectionId = `mcp_${randomUUID().slice(0, 8)}`;
  return daemon.sessions.reserve(connectionId, undefined, { idleMs, id }).open(mcpSessionFields(daemon, principal, agent));
}

function openMcpSession(daemon: Services, slot: SessionSlot, principal: Principal, agent: string): Session {
  return slot.open(mcpSessionFields(daemon, principal, agent));
}

export interface StdioPrincipal {
  session: Session;
  /** Verifies TOOLGATE_MCP_TOKEN again (its `exp` above all); a message when it no longer holds. */
  checkAuth: () => Promise<string | null>;
}

/**
 * The one principal of `serve --mcp`: the user of the bearer token in
 * TOOLGATE_MCP_TOKEN, its session registered like any other. A missing or
 * bad token stops the server before it speaks MCP; one that expires later
 * fails each call with UNAUTHENTICATED instead. The token is never echoed.
 */
export async function openMcpStdioPrincipal(daemon: Services, env: NodeJS.ProcessEnv): Promise<StdioPrincipal> {
  const token = env.TOOLGATE_MCP_TOKEN;
  if (!token) throw new ConfigError('serve --mcp acts for the user of a bearer token: set TOOLGATE_MCP_TOKEN');
  const agent = mcpAgentName(daemon, env);
  const slot = daemon.sessions.reserve('mcp-stdio');
  let principal: Principal;
  try {
    // A refusal here ends the server with its reason in one line: no log line besides.
    principal = await authenticateUser(daemon, { token }, { env, logRefusal: false });
  } catch (err) {
    slot.release();
    if (err instanceof AuthError) throw new ConfigError(`TOOLGATE_MCP_TOKEN: ${err.message}`);
    throw err;
  }
  if (!daemon.config.agents.has(agent)) {
    slot.release();
    throw new ConfigError(`TOOLGATE_MCP_AGENT: unknown agent profile "${agent}"`);
  }
  return {
    session: openMcpSession(daemon, slot, principal, agent),
    async checkAuth() {
      try {
        await authenticateUser(daemon, { token }, { env });
        return null;
      } catch (err) {
        if (err instanceof AuthError && err.reason === 'unavailable') return `TOOLGATE_MCP_TOKEN: ${err.message}`;
        if (err instanceof AuthError) return `TOOLGATE_MCP_TOKEN: ${err.message}; start the server with a fresh token`;
        throw err;
      }
    },
  };
}
