/**
 * The `--config FILE` document (JSON or YAML). Unknown keys are an error
 * naming the key, so a typo never silently falls back to a default.
 */
import { z } from 'zod';
import { named } from './registry.js';

const Positive = z.number().int().positive();

export const AgentProfileConfig = named(
  'config',
  'AgentProfileConfig',
  z.strictObject({
    enabled_skills: z.array(z.string().min(1)),
    allowed_actions: z.array(z.string().min(1)),
  }),
  'enabled_skills decides which SKILL.md the agent sees; allowed_actions (module.method or module.*) alone decides what it may run.',
);

export const LimitsConfig = named(
  'config',
  'LimitsConfig',
  z.strictObject({
    call_timeout_ms: Positive.optional(),
    max_message_bytes: Positive.optional(),
    max_in_flight: Positive.optional(),
    ping_interval_ms: Positive.optional(),
    shutdown_grace_ms: Positive.optional(),
    ws_high_water_bytes: Positive.optional(),
    ws_max_buffered_bytes: Positive.optional(),
    max_processes: Positive.optional(),
    max_sessions_per_connection: Positive.optional(),
    max_subscriptions_per_connection: Positive.optional(),
  }),
);

export const StoreConfig = named(
  'config',
  'StoreConfig',
  z.strictObject({ synchronous: z.enum(['FULL', 'NORMAL']).optional(), pool_size: Positive.optional() }),
);

export const AuthConfig = named('config', 'AuthConfig', z.strictObject({ max_token_lifetime_s: Positive.optional() }));

export const HttpConfig = named(
  'config',
  'HttpConfig',
  z.strictObject({ allowed_origins: z.array(z.string().min(1)).optional(), allowed_hosts: z.array(z.string().min(1)).optional() }),
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
  }),
  'The daemon configuration file (--config FILE).',
);

export type ConfigFile = z.infer<typeof ConfigFile>;
/** `store.synchronous`: how SQLite commits (`FULL`, the default, survives a power loss). */
export type SynchronousMode = NonNullable<z.infer<typeof StoreConfig>['synchronous']>;
