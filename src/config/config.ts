import { ConfigFile, DEFAULT_APPROVAL_TTL_S, type SynchronousMode } from '../protocol/config.js';
import { ACTION_NAMES } from '../protocol/action-table.js';
import { ConfigError } from './config-error.js';
import { describeConfigIssues, parseConfigText, protoKeyPath, readConfigText } from './config-file.js';
import type { QuotaLimitsRow, QuotaPeriod } from '../store/store.js';

/** One configured quota, its pattern expanded against the action table. */
export interface Quota {
  /** The pattern as configured (`calendar.*`, `memory.update`): part of its counters' scope. */
  pattern: string;
  /** The exact `module.method` names it matches. */
  actions: readonly string[];
  /** Calls allowed per window; at least one period is set. */
  limits: Readonly<Partial<Record<QuotaPeriod, number>>>;
}

/** A session's quotas and whose they are: `agent:<profile>` or `job:<job id>` (counted per user within it). */
export interface QuotaSet {
  owner: string;
  quotas: readonly Quota[];
}


/** An agent profile: what it may see (skills) and, independently, what it may run — and how often. */
export interface AgentProfile {
  enabledSkills: string[];
  /** Exact `module.method` names, wildcards already expanded against the registry. */
  allowedActions: string[];
  /** `agents.<name>.quotas`, patterns expanded; empty: no quota. */
  quotas: Quota[];
  /** Actions that wait for a person's approval of the exact call (contract section 17); none when empty. */
  approval: ApprovalPolicy;
}

/** `approval`: which actions ask (exact names, wildcards expanded) and how long a call waits for the decision. */
export interface ApprovalPolicy {
  ask: ReadonlySet<string>;
  ttlS: number;
}

/** No action asks. */
const NO_APPROVAL: ApprovalPolicy = { ask: new Set(), ttlS: DEFAULT_APPROVAL_TTL_S };

/** The policy of an `approval` object (config file or automation job); patterns are checked against the action table. */
export function approvalPolicy(a: { ask: readonly string[]; ttl_s?: number | undefined } | undefined | null, where: string): ApprovalPolicy {
  if (!a || a.ask.length === 0) return a?.ttl_s ? { ask: new Set(), ttlS: a.ttl_s } : NO_APPROVAL;
  return { ask: new Set(expandActions(a.ask, `${where}.ask`)), ttlS: a.ttl_s ?? DEFAULT_APPROVAL_TTL_S };
}

export interface DaemonConfig {
  agents: Map<string, AgentProfile>;
  limits: Partial<{
    callTimeoutMs: number;
    /** `limits.action_timeout_ms`: exact `module.method` → its time limit, overriding `callTimeoutMs`. */
    actionTimeoutMs: Readonly<Record<string, number>>;
    cancelGraceMs: number;
    maxMessageBytes: number;
    maxInFlight: number;
    pingIntervalMs: number;
    shutdownGraceMs: number;
    highWaterBytes: number;
    maxBufferedBytes: number;
    maxProcesses: number;
    maxSessionsPerConnection: number;
    maxConnectionsPerUser: number;
    maxSubscriptionsPerConnection: number;
    maxResultBytes: number;
  }>;
  store: {
    /** `FULL` (default): an acknowledged call survives a power loss. `NORMAL` is the documented opt-in. */
    synchronous: SynchronousMode;
    /** PostgreSQL connections per daemon; each runs one call's transaction at a time. */
    poolSize?: number;
    /** PostgreSQL behind a pooler: the direct URL for LISTEN and call marks (`store.listen_url`). */
    listenUrl?: string;
  };
  auth: {
    /** When set, a bearer token whose `exp - iat` (or `exp - now`) exceeds this is refused. */
    maxTokenLifetimeS?: number;
    /** `auth.issuer`: the OAuth / OpenID authorization server whose access tokens are accepted. */
    issuer?: string;
    /** `auth.audience`: the `aud` its tokens must carry; unset → `<http.public_url>/mcp`. */
    audience?: string;
    /** `auth.jwks_url`: the issuer's keys; unset → discovered from the issuer's metadata. */
    jwksUrl?: string;
    /** `auth.scopes`: advertised in the metadata and the 401 challenge; unset → none. */
    scopes?: string[];
  };
  http: {
    /** Origins a browser may call `/mcp` (and friends) from; unset → loopback origins only. */
    allowedOrigins?: string[];
    /** Host header values accepted; unset → loopback hosts only (DNS-rebinding protection). */
    allowedHosts?: string[];
    /** `http.public_url` without a trailing slash; unset → `http://HOST:PORT` of the listening socket. */
    publicUrl?: string;
  };
  mcp: {
    /** The agent profile MCP sessions use (stdio also reads `TOOLGATE_MCP_AGENT`). */
    agent?: string;
  };
  metrics: {
    /** `GET /metrics`; unset → on for a loopback `--host`, off beyond (serve.ts decides). */
    enabled?: boolean;
  };
}

/** The file's schema is a wire shape (schemas/config.json), declared once in src/protocol. */
const ConfigSchema = ConfigFile;

export const DEFAULT_CONFIG = {
  agents: {
    default: { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.read', 'memory.*'] },
  },
};

/**
 * Loads `--config FILE` (JSON, or YAML for .yaml/.yml), or the default single profile. Every
 * problem is a ConfigError that names the file and the field.
 */
export function loadConfig(file: string | undefined, knownSkills: readonly string[]): DaemonConfig {
  let raw: unknown = DEFAULT_CONFIG;
  if (file !== undefined) {
    raw = parseConfigText(file, readConfigText(file));
  }
  const where = file ?? 'default config';
  const proto = protoKeyPath(raw);
  if (proto !== null) throw new ConfigError(`config ${where}: unknown key ${proto}`);
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(`config ${where}: ${describeConfigIssues(parsed.error.issues)}`);
  }
  const agents = new Map<string, AgentProfile>();
  for (const [name, p] of Object.entries(parsed.data.agents)) {
    for (const skill of p.enabled_skills) {
      if (!knownSkills.includes(skill)) throw new ConfigError(`config ${where}: agents.${name}.enabled_skills: unknown skill "${skill}"`);
    }
    agents.set(name, {
      enabledSkills: [...new Set(p.enabled_skills)],
      allowedActions: expandActions(p.allowed_actions, `config ${where}: agents.${name}.allowed_actions`),
      quotas: compileQuotas(p.quotas, `config ${where}: agents.${name}.quotas`),
      approval: approvalPolicy(p.approval, `config ${where}: agents.${name}.approval`),
    });
  }
  const l = parsed.data.limits ?? {};
  const limits: DaemonConfig['limits'] = {};
  if (l.call_timeout_ms) limits.callTimeoutMs = l.call_timeout_ms;
  if (l.action_timeout_ms) {
    for (const action of Object.keys(l.action_timeout_ms)) {
      if (!(ACTION_NAMES as readonly string[]).includes(action)) throw new ConfigError(`config ${where}: limits.action_timeout_ms: "${action}" is not an action (module.method)`);
    }
    limits.actionTimeoutMs = { ...l.action_timeout_ms };
  }
  if (l.cancel_grace_ms) limits.cancelGraceMs = l.cancel_grace_ms;
  if (l.max_message_bytes) limits.maxMessageBytes = l.max_message_bytes;
  if (l.max_in_flight) limits.maxInFlight = l.max_in_flight;
  if (l.ping_interval_ms) limits.pingIntervalMs = l.ping_interval_ms;
  if (l.shutdown_grace_ms) limits.shutdownGraceMs = l.shutdown_grace_ms;
  if (l.ws_high_water_bytes) limits.highWaterBytes = l.ws_high_water_bytes;
  if (l.ws_max_buffered_bytes) limits.maxBufferedBytes = l.ws_max_buffered_bytes;
  if (l.max_processes) limits.maxProcesses = l.max_processes;
  if (l.max_sessions_per_connection) limits.maxSessionsPerConnection = l.max_sessions_per_connection;
  if (l.max_connections_per_user) limits.maxConnectionsPerUser = l.max_connections_per_user;
  if (l.max_subscriptions_per_connection) limits.maxSubscriptionsPerConnection = l.max_subscriptions_per_connection;
  if (l.max_result_bytes) limits.maxResultBytes = l.max_result_bytes;
  const d = parsed.data;
  if (d.mcp?.agent !== undefined && !agents.has(d.mcp.agent)) {
    throw new ConfigError(`config ${where}: mcp.agent: no agent profile "${d.mcp.agent}"`);
  }
  return {
    agents,
    limits,
    store: {
      synchronous: d.store?.synchronous ?? 'FULL',
      ...(d.store?.pool_size ? { poolSize: d.store.pool_size } : {}),
      ...(d.store?.listen_url ? { listenUrl: d.store.listen_url } : {}),
    },
    auth: {
      ...(d.auth?.max_token_lifetime_s ? { maxTokenLifetimeS: d.auth.max_token_lifetime_s } : {}),
      ...(d.auth?.issuer ? { issuer: d.auth.issuer } : {}),
      ...(d.auth?.audience ? { audience: d.auth.audience } : {}),
      ...(d.auth?.jwks_url ? { jwksUrl: d.auth.jwks_url } : {}),
      ...(d.auth?.scopes ? { scopes: d.auth.scopes } : {}),
    },
    http: {
      ...(d.http?.allowed_origins ? { allowedOrigins: d.http.allowed_origins } : {}),
      ...(d.http?.allowed_hosts ? { allowedHosts: d.http.allowed_hosts } : {}),
      ...(d.http?.public_url ? { publicUrl: d.http.public_url.replace(/\/+$/, '') } : {}),
    },
    mcp: d.mcp?.agent ? { agent: d.mcp.agent } : {},
    metrics: d.metrics?.enabled === undefined ? {} : { enabled: d.metrics.enabled },
  };
}

/** `calendar.*` → every calendar action of the registry; an exact name must exist. */
export function expandActions(patterns: readonly string[], where: string): string[] {
  const out = new Set<string>();
  for (const pattern of patterns) {
    const matches = pattern.endsWith('.*')
      ? ACTION_NAMES.filter((a) => a.startsWith(pattern.slice(0, -1)))
      : ACTION_NAMES.filter((a) => a === pattern);
    if (matches.length === 0) throw new ConfigError(`${where}: "${pattern}" matches no action`);
    matches.forEach((m) => out.add(m));
  }
  return [...out].sort();
}

/**
 * `{"<pattern>": {per_minute?, per_hour?, per_day?}}` (already validated by
 * its schema) → quotas with their patterns expanded; a pattern that matches
 * no action is an error naming it, as in `allowed_actions`.
 */
export function compileQuotas(raw: Readonly<Record<string, QuotaLimitsRow>> | undefined, where: string): Quota[] {
  return Object.entries(raw ?? {}).map(([pattern, l]) => ({
    pattern,
    actions: expandActions([pattern], where),
    limits: {
      ...(l.per_minute !== undefined ? { minute: l.per_minute } : {}),
      ...(l.per_hour !== undefined ? { hour: l.per_hour } : {}),
      ...(l.per_day !== undefined ? { day: l.per_day } : {}),
    },
  }));
}
