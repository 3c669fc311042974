import { randomUUID } from 'node:crypto';
import { ConfigError, Unauthorized, verifyBearer, type BearerIdentity } from './bearer-auth.js';
import type { Daemon } from './daemon.js';
import type { Session } from './sessions.js';

/**
 * The agent profile MCP sessions use: `mcp.agent` of the config (stdio:
 * TOOLGATE_MCP_AGENT wins, it is set per host entry), else `default`.
 */
export function mcpAgentName(daemon: Daemon, env?: NodeJS.ProcessEnv): string {
  return env?.TOOLGATE_MCP_AGENT ?? daemon.config.mcp.agent ?? 'default';
}

/**
 * The daemon-side session of an MCP principal: the user, the profile's
 * skills and whitelist. It is never registered for `tool/invoke` — MCP
 * clients cannot name it — and lives as long as its MCP server instance.
 */
export function mcpSession(daemon: Daemon, userId: string, agent: string, connectionId: string): Session {
  const profile = daemon.config.agents.get(agent);
  if (!profile) throw new ConfigError(`unknown agent profile "${agent}" for MCP`);
  return {
    id: `ses_${randomUUID()}`,
    userId,
    connectionId,
    source: 'session',
    jobId: null,
    enabledSkills: profile.enabledSkills,
    allowedActions: profile.allowedActions,
  };
}

/** A user seen for the first time is provisioned from the token's claims, as on `session/open`. */
export async function provisionMcpUser(daemon: Daemon, identity: BearerIdentity): Promise<string> {
  return (await daemon.store.transaction((tx) => tx.users.provision(identity.userId, identity))).id;
}

export interface StdioPrincipal {
  session: Session;
  /** Verifies TOOLGATE_MCP_TOKEN again (its `exp` above all); a message when it no longer holds. */
  checkAuth: () => Promise<string | null>;
}

/**
 * The one principal of `serve --mcp`: the user of the bearer token in
 * TOOLGATE_MCP_TOKEN. A missing or bad token stops the server before it
 * speaks MCP; one that expires later fails each call with UNAUTHENTICATED
 * instead. The token is never echoed.
 */
export async function openMcpStdioPrincipal(daemon: Daemon, env: NodeJS.ProcessEnv): Promise<StdioPrincipal> {
  const token = env.TOOLGATE_MCP_TOKEN;
  if (!token) throw new ConfigError('serve --mcp acts for the user of a bearer token: set TOOLGATE_MCP_TOKEN');
  let identity: BearerIdentity;
  try {
    identity = await verifyBearer(token, daemon.bearerKeys, env);
  } catch (err) {
    if (err instanceof Unauthorized) throw new ConfigError(`TOOLGATE_MCP_TOKEN: ${err.message}`);
    throw err;
  }
  const agent = mcpAgentName(daemon, env);
  if (!daemon.config.agents.has(agent)) throw new ConfigError(`TOOLGATE_MCP_AGENT: unknown agent profile "${agent}"`);
  const userId = await provisionMcpUser(daemon, identity);
  return {
    session: mcpSession(daemon, userId, agent, 'mcp-stdio'),
    async checkAuth() {
      try {
        await verifyBearer(token, daemon.bearerKeys, env);
        return null;
      } catch (err) {
        if (err instanceof Unauthorized) return `TOOLGATE_MCP_TOKEN: ${err.message}; start the server with a fresh token`;
        throw err;
      }
    },
  };
}
