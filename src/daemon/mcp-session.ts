import { ConfigError, Unauthorized, verifyBearer } from './bearer-auth.js';
import type { Daemon } from './daemon.js';
import type { Session } from './sessions.js';

/**
 * The one session of `serve --mcp`: the user of the bearer token in
 * TOOLGATE_MCP_TOKEN, with the agent profile TOOLGATE_MCP_AGENT (default
 * `default`). A missing or bad token stops the server before it speaks MCP;
 * the token is never echoed.
 */
export async function openMcpSession(daemon: Daemon, env: NodeJS.ProcessEnv): Promise<Session> {
  const token = env.TOOLGATE_MCP_TOKEN;
  if (!token) throw new ConfigError('serve --mcp acts for the user of a bearer token: set TOOLGATE_MCP_TOKEN');
  let identity;
  try {
    identity = await verifyBearer(token, daemon.bearerKeys, env);
  } catch (err) {
    if (err instanceof Unauthorized) throw new ConfigError(`TOOLGATE_MCP_TOKEN: ${err.message}`);
    throw err;
  }
  const agent = env.TOOLGATE_MCP_AGENT ?? 'default';
  const profile = daemon.config.agents.get(agent);
  if (!profile) throw new ConfigError(`TOOLGATE_MCP_AGENT: unknown agent profile "${agent}"`);
  const user = await daemon.store.transaction((tx) => tx.users.provision(identity.userId, identity));
  return daemon.sessions.open({
    userId: user.id,
    connectionId: 'mcp',
    source: 'session',
    jobId: null,
    enabledSkills: profile.enabledSkills,
    allowedActions: profile.allowedActions,
  });
}
