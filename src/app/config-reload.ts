/**
 * SIGHUP: the daemon reads its `--config` file again (contract §20). One log
 * line says what happened — `config reloaded`, or `config reload rejected`
 * with the reason naming the file and the key — and
 * `toolgate_config_reloads_total{result}` counts it. A file that does not
 * load changes nothing (src/sessions/profile-reload.ts applies a valid one).
 */
import { loadConfig, type DaemonConfig } from '../config/config.js';
import { applyConfig, type LiveLimits, type ReloadTarget } from '../sessions/profile-reload.js';
import type { Services } from '../rpc/services.js';
import type { Logger } from '../runtime/logger.js';
import { discoverSkills } from '../sessions/skills.js';

export interface ReloadDeps {
  /** What a reload replaces in place, and the metrics counting it. */
  services: ReloadTarget & Pick<Services, 'metrics'>;
  log: Logger;
  /** `--config`; undefined: nothing to reload. */
  file: string | undefined;
  /** The live limits a configuration gives, flags given at start winning (serve.ts `limitsOf`). */
  liveLimitsOf(config: DaemonConfig): LiveLimits;
}

/** Reloads the configuration file now; never throws (a daemon serving calls must not die of a bad file). */
export function reloadConfig(deps: ReloadDeps): 'ok' | 'rejected' | 'none' {
  const { services, log, file } = deps;
  if (file === undefined) {
    log.log('warn', 'SIGHUP: no --config file to reload; nothing changed');
    return 'none';
  }
  let next: DaemonConfig;
  try {
    next = loadConfig(file, discoverSkills());
  } catch (err) {
    // ConfigError's message already names the file and the key; anything else is said as plainly.
    log.log('error', 'config reload rejected: nothing changed', { reason: (err as Error).message });
    services.metrics?.configReloaded('rejected');
    return 'rejected';
  }
  const applied = applyConfig(services, next, deps.liveLimitsOf(next));
  log.log(applied.needsRestart.length > 0 || applied.orphaned > 0 ? 'warn' : 'info', 'config reloaded', {
    file,
    agents: [...next.agents.keys()],
    sessions: applied.sessions,
    ...(applied.orphaned > 0 ? { sessions_without_profile: applied.orphaned } : {}),
    ...(applied.needsRestart.length > 0 ? { needs_restart: applied.needsRestart } : {}),
  });
  services.metrics?.configReloaded('ok');
  return 'ok';
}
