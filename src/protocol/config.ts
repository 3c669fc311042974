/**
 * The `--config FILE` document (JSON or YAML). Unknown keys are an error
 * naming the key, so a typo never silently falls back to a default.
 */
import { z } from 'zod';
import { named } from './registry.js';
import { MAX_TIMER_MS } from './limits.js';

const Positive = z.number().int().positive();
/**
 * A positive integer of at most `max`. The bound is checked before `int()`, whose own range (the largest
 * safe integer) would otherwise be the one a value far past `max` (1e99) is told of.
 */
const PositiveAtMost = (max: number, message: string) => z.number().positive().max(max, message).int();
/** A delay handed to a Node timer: a longer one would be clamped to 1 ms. */
const Millis = PositiveAtMost(MAX_TIMER_MS, `must be at most ${MAX_TIMER_MS} (the longest timer Node holds)`);
/** `*` is refused: it reads like "any origin" but would match none; list the origins (or `scheme://*`). */
const HttpPattern = z
  .string()
  .min(1)
  .refine((v) => v.trim() !== '*', 'a bare "*" is not supported: list the origins or hosts to accept (for an origin, "https://*" accepts any https origin)');

/** The largest count a quota window may allow (a 32-bit column on every engine). */
export const MAX_QUOTA = 1_000_000_000;
const QuotaCount = PositiveAtMost(MAX_QUOTA, `must be at most ${MAX_QUOTA}`);

/** One quota: calls per fixed UTC window (minute, hour, day), per user; at least one window. */
export const QuotaLimits = named(
  'config',
  'QuotaLimits',
  z
    .strictObject({ per_minute: QuotaCount.optional(), per_hour: QuotaCount.optional(), per_day: QuotaCount.optional() })
    .refine((q) => q.per_minute !== undefined || q.per_hour !== undefined || q.per_day !== undefined, 'set at least one of per_minute, per_hour, per_day'),
  'Calls per fixed UTC window (the minute, the hour, the day), counted per user in the store across every daemon.',
);

/**
 * `{"<pattern>": QuotaLimits}`: a pattern as in `allowed_actions`
 * (`module.method` or `module.*`); every call of an action it matches counts
 * against it (a call matching two patterns counts against both).
 */
export const QuotasConfig = named(
  'config',
  'QuotasConfig',
  z.record(z.string().min(1).max(200), QuotaLimits).refine((q) => Object.keys(q).length <= 100, 'at most 100 quotas'),
  'Per-user call quotas of a profile or an automation job, by action pattern (module.method or module.*).',
);

/** The longest a call may wait for a person's decision (contract section 17): one day. */
export const MAX_APPROVAL_TTL_S = 86_400;
/** How long a call waits for a decision when `ttl_s` is not set. */
export const DEFAULT_APPROVAL_TTL_S = 600;

export const ApprovalConfig = named(
  'config',
  'ApprovalConfig',
  z.strictObject({
    /** Actions (`module.method` or `module.*`, as in allowed_actions) that run only once a person approves the exact call. */
    ask: z.array(z.string().min(1)),
    /** How long a call waits for the decision, in seconds (default 600, at most 86400); past it the call fails APPROVAL_EXPIRED. */
    ttl_s: PositiveAtMost(MAX_APPROVAL_TTL_S, `must be at most ${MAX_APPROVAL_TTL_S} (one day)`).optional(),
  }),
  'Which actions wait for a person to approve the exact call (args digest) before they run, and for how long.',
);

export const AgentProfileConfig = named(
  'config',
  'AgentProfileConfig',
  z.strictObject({
    enabled_skills: z.array(z.string().min(1)),
    allowed_actions: z.array(z.string().min(1)),
    quotas: QuotasConfig.optional(),
    approval: ApprovalConfig.optional(),
  }),
  'enabled_skills decides which SKILL.md the agent sees; allowed_actions (module.method or module.*) alone decides what it may run; quotas how often, per user; approval.ask which of those wait for a person.',
);

export const LimitsConfig = named(
  'config',
  'LimitsConfig',
  z.strictObject({
    call_timeout_ms: Millis.optional(),
    /** Per action (`module.method`), overriding `call_timeout_ms`; names are checked against the action table. */
    action_timeout_ms: z.record(z.string().min(1).max(200), Millis).optional(),
    /** A stopped subprocess call: SIGTERM, then SIGKILL after this long. */
    cancel_grace_ms: Millis.optional(),
    max_message_bytes: Positive.optional(),
    max_in_flight: Positive.optional(),
    ping_interval_ms: Millis.optional(),
    shutdown_grace_ms: Millis.optional(),
    ws_high_water_bytes: Positive.optional(),
    ws_max_buffered_bytes: Positive.optional(),
    max_processes: Positive.optional(),
    max_sessions_per_connection: Positive.optional(),
    max_connections_per_user: Positive.optional(),
    max_subscriptions_per_connection: Positive.optional(),
    max_result_bytes: Positive.optional(),
  }),
);

export const StoreConfig = named(
  'config',
  'StoreConfig',
  z.strictObject({
    synchronous: z.enum(['FULL', 'NORMAL']).optional(),
    pool_size: Positive.optional(),
    /**
     * PostgreSQL behind a pooler: a direct connection URL for the connections
     * that keep session state (LISTEN, call marks); null or absent = the main URL.
     */
    listen_url: z
      .string()
      .max(2_000)
      .regex(/^postgres(ql)?:\/\//i, 'a postgres:// or postgresql:// URL')
      .nullable()
      .optional(),
  }),
);

/** Host names a plain-http issuer or JWKS may use: anything else must be https (tokens' keys are fetched from it). */
export function isLoopbackHostname(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** An absolute http(s) URL without credentials or fragment, at most 2000 characters. */
const HttpUrl = z
  .string()
  .max(2_000)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'https:' || u.protocol === 'http:') && u.username === '' && u.password === '' && u.hash === '';
    } catch {
      return false;
    }
  }, 'must be an absolute http:// or https:// URL (no user, password or #fragment)');

/** Where signing keys come from: https, or plain http only on a loopback host (a test or a local provider). */
const KeyServerUrl = HttpUrl.refine((v) => {
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || isLoopbackHostname(u.hostname);
  } catch {
    return true; // HttpUrl has said why already
  }
}, 'must be https:// (plain http:// only for a loopback host such as 127.0.0.1 or localhost)');

export const AuthConfig = named(
  'config',
  'AuthConfig',
  z.strictObject({
    max_token_lifetime_s: Positive.optional(),
    /** An OAuth 2.1 / OpenID authorization server whose access tokens are accepted (`iss`). */
    issuer: KeyServerUrl.optional(),
    /** The `aud` an access token must carry: this resource (default `<http.public_url>/mcp`). */
    audience: z.string().min(1).max(2_000).optional(),
    /** The issuer's JWKS (default: `jwks_uri` of the issuer's RFC 8414 / OpenID metadata). */
    jwks_url: KeyServerUrl.optional(),
    /**
     * Scopes advertised to OAuth clients (RFC 9728 `scopes_supported`, and
     * `scope` in the 401 challenge): what a client asks its authorization
     * server for. Advertised only, not enforced; default none.
     */
    scopes: z
      .array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,200}$/, 'a scope is 1-200 printable ASCII characters without space, " or \\ (RFC 6749 section 3.3)'))
      .max(50)
      .refine((a) => new Set(a).size === a.length, 'each scope once')
      .optional(),
  }),
  'Bearer token policy, and the OAuth authorization server (issuer) whose access tokens are accepted.',
);

export const HttpConfig = named(
  'config',
  'HttpConfig',
  z.strictObject({
    allowed_origins: z.array(HttpPattern).optional(),
    allowed_hosts: z.array(HttpPattern).optional(),
    /** The base URL clients reach this server at (e.g. `https://tools.example.com`); default `http://HOST:PORT`. */
    public_url: HttpUrl.refine((v) => {
      try {
        return new URL(v).search === '';
      } catch {
        return true;
      }
    }, 'must not carry a ?query')
      // It goes into `WWW-Authenticate: Bearer resource_metadata="…"`, a quoted-string: refused rather than escaped.
      .refine((v) => /^[\x21\x23-\x5b\x5d-\x7e]*$/.test(v), 'must be printable ASCII without space, " or \\ (it is quoted in WWW-Authenticate)')
      .optional(),
  }),
);

export const McpConfig = named('config', 'McpConfig', z.strictObject({ agent: z.string().min(1).optional() }));

export const MetricsConfig = named(
  'config',
  'MetricsConfig',
  z.strictObject({ enabled: z.boolean().optional() }),
  'GET /metrics on the --ws server: on by default for a loopback --host, off beyond unless enabled is set.',
);

export const ConfigFile = named(
  'config',
  'ConfigFile',
  z.strictObject({
    agents: z.record(z.string().min(1), AgentProfileConfig).refine((a) => Object.keys(a).length > 0, 'at least one agent profile'),
    limits: LimitsConfig.optional(),
    store: StoreConfig.optional(),
    auth: AuthConfig.optional(),
    http: HttpConfig.optional(),
    mcp: McpConfig.optional(),
    metrics: MetricsConfig.optional(),
  }).refine((c) => c.auth?.issuer !== undefined || (c.auth?.audience === undefined && c.auth?.jwks_url === undefined && c.auth?.scopes === undefined), {
    message: 'required when auth.audience, auth.jwks_url or auth.scopes is set (they describe its tokens)',
    path: ['auth', 'issuer'],
  }),
  'The daemon configuration file (--config FILE).',
);

export type ConfigFile = z.infer<typeof ConfigFile>;
/** `store.synchronous`: how SQLite commits (`FULL`, the default, survives a power loss). */
export type SynchronousMode = NonNullable<z.infer<typeof StoreConfig>['synchronous']>;
export type QuotaLimits = z.infer<typeof QuotaLimits>;
export type ApprovalConfig = z.infer<typeof ApprovalConfig>;
