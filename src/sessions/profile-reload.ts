/**
 * Reloading `--config` while the daemon serves (SIGHUP, contract §20). The
 * file is loaded and validated whole first: a file that does not load
 * changes nothing. A valid one replaces, for every call admitted from then
 * on, what can change live:
 *
 * - the agent profiles — skills, allowed actions, quotas, approval lists (and whatever else
 *   a profile carries) — and the open sessions of each profile get its new
 *   lists in place, keeping their user, their profile name and the skills
 *   their host narrowed to; a session whose profile is gone keeps nothing
 *   (no skill, no action);
 * - `limits.call_timeout_ms`, `limits.action_timeout_ms`, `limits.cancel_grace_ms`
 *   (a flag given at start still wins), `auth.max_token_lifetime_s` and `mcp.agent`.
 *
 * Everything else (the store, the HTTP listener and its guard, the issuer,
 * the transports' limits, metrics) is read once at start: a change to it is
 * named in the reload's log line as needing a restart, and not applied.
 */
import type { DaemonConfig } from '../config/config.js';
import type { SessionRegistry } from './sessions.js';
import { profileFields } from './session-open.js';
import type { Session } from './sessions.js';

/** What a reload replaces in place: the live settings every call reads when it is admitted, and the open sessions. */
export interface ReloadTarget {
  config: DaemonConfig;
  callTimeoutMs: number;
  timeoutMs(action: string): number;
  cancelGraceMs: number;
  sessions: SessionRegistry;
}

/** The limits a reload changes for calls admitted from then on. */
export interface LiveLimits {
  callTimeoutMs: number;
  actionTimeoutMs: Readonly<Record<string, number>>;
  cancelGraceMs: number;
}

export interface AppliedReload {
  /** Open sessions whose lists now come from the new profiles. */
  sessions: number;
  /** Sessions whose profile the new file no longer has: they may run nothing now. */
  orphaned: number;
  /** Settings that changed in the file but apply only after a restart (`store`, `http.allowed_hosts`…). */
  needsRestart: string[];
}

/** Read once at start: a change here waits for a restart. */
const RESTART_ONLY = ['store', 'http', 'metrics'] as const;
const RESTART_ONLY_AUTH = ['issuer', 'audience', 'jwksUrl', 'scopes'] as const;
/** `limits` keys (DaemonConfig names) that apply live; the others are the transports' and the pools', read at start. */
const LIVE_LIMITS = new Set(['callTimeoutMs', 'actionTimeoutMs', 'cancelGraceMs']);

/** Applies a configuration already loaded and validated (`loadConfig`): synchronous, so no call sees half of it. */
export function applyConfig(deps: ReloadTarget, next: DaemonConfig, live: LiveLimits): AppliedReload {
  const prev = deps.config;
  const needsRestart = restartOnlyChanges(prev, next);
  deps.config = {
    ...prev,
    agents: next.agents,
    limits: { ...prev.limits, ...pick(next.limits, LIVE_LIMITS) },
    auth: { ...prev.auth, maxTokenLifetimeS: next.auth.maxTokenLifetimeS },
    mcp: next.mcp,
  };
  if (next.auth.maxTokenLifetimeS === undefined) delete deps.config.auth.maxTokenLifetimeS;
  deps.callTimeoutMs = live.callTimeoutMs;
  deps.cancelGraceMs = live.cancelGraceMs;
  deps.timeoutMs = (action) => live.actionTimeoutMs[action] ?? live.callTimeoutMs;
  let sessions = 0;
  let orphaned = 0;
  for (const session of deps.sessions.openSessions()) {
    if (session.agent === undefined) continue;
    sessions++;
    if (!refresh(deps, session)) orphaned++;
  }
  deps.sessions.reloaded();
  return { sessions, orphaned, needsRestart };
}

/** Gives a session its profile's lists as the configuration has them now; false when the profile is gone. */
function refresh(deps: ReloadTarget, session: Session): boolean {
  const profile = deps.config.agents.get(session.agent!);
  if (!profile) {
    session.enabledSkills = [];
    session.allowedActions = [];
    delete session.quotas;
    delete session.approval;
    return false;
  }
  const requested = session.requestedSkills;
  session.enabledSkills = requested ? profile.enabledSkills.filter((s) => requested.includes(s)) : profile.enabledSkills;
  session.allowedActions = profile.allowedActions;
  const fields = profileFields(session.agent!, profile, requested);
  if (fields.quotas) session.quotas = fields.quotas;
  else delete session.quotas;
  session.approval = fields.approval;
  return true;
}

function pick<T extends object>(o: T, keys: ReadonlySet<string>): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([k]) => keys.has(k))) as Partial<T>;
}

/** The config keys (file names) that changed but apply only after a restart. */
function restartOnlyChanges(prev: DaemonConfig, next: DaemonConfig): string[] {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const changed: string[] = RESTART_ONLY.filter((k) => !same(prev[k], next[k]));
  for (const k of RESTART_ONLY_AUTH) if (!same(prev.auth[k], next.auth[k])) changed.push(`auth.${snake(k)}`);
  const limitKeys = new Set([...Object.keys(prev.limits), ...Object.keys(next.limits)].filter((k) => !LIVE_LIMITS.has(k)));
  for (const k of limitKeys) {
    if (!same(prev.limits[k as keyof DaemonConfig['limits']], next.limits[k as keyof DaemonConfig['limits']])) changed.push(`limits.${limitFileKey(k)}`);
  }
  return changed.sort();
}

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** DaemonConfig's limit names back to the file's keys (two differ beyond camelCase). */
function limitFileKey(k: string): string {
  if (k === 'highWaterBytes') return 'ws_high_water_bytes';
  if (k === 'maxBufferedBytes') return 'ws_max_buffered_bytes';
  return snake(k);
}
