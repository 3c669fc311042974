/**
 * Per-user call quotas (contract §20): which counters a call counts
 * against, counting it in the store before it runs, and the `RATE_LIMITED`
 * answer when a window is full. The counting itself is the store's
 * (`QuotasRepo.take`, one statement, exact across daemons); a call whose
 * action no quota names costs nothing here — no statement at all.
 */
import type { RateLimitedError } from '../protocol/tool.js';
import type { CallKeyOf, QuotaCounter, QuotaPeriod, QuotaUse, Store } from '../store/store.js';
import type { QuotaSet } from '../config/config.js';
import type { Logger } from '../runtime/logger.js';

const PERIODS: readonly QuotaPeriod[] = ['minute', 'hour', 'day'];
const PERIOD_MS: Readonly<Record<QuotaPeriod, number>> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** Every window a call of `action` counts against now: one per period of each quota naming it. */
function countersFor(set: QuotaSet | undefined, action: string, nowMs: number): QuotaCounter[] {
  if (!set) return [];
  const counters: QuotaCounter[] = [];
  for (const q of set.quotas) {
    if (!q.actions.includes(action)) continue;
    for (const period of PERIODS) {
      const allowed = q.limits[period];
      if (allowed === undefined) continue;
      // Unix time has no leap seconds: multiples of the period are the UTC minute, hour and day.
      counters.push({ scope: `${set.owner}:${q.pattern}`, period, windowStart: nowMs - (nowMs % PERIOD_MS[period]), allowed });
    }
  }
  return counters;
}

/** What a full quota tells the model: which one, and how long until its window ends. */
export interface QuotaRefusal {
  pattern: string;
  period: QuotaPeriod;
  limit: number;
  retryAfterMs: number;
}

export type QuotaDecision =
  /** No quota names the action: nothing was asked of the store. */
  | { kind: 'free' }
  /** Counted against these counters (given back if the call turns out stored). */
  | { kind: 'counted'; counters: QuotaCounter[] }
  /** The call is stored already: a replay, never counted. */
  | { kind: 'stored' }
  | { kind: 'limited'; refusal: QuotaRefusal };

/**
 * Counts the call against its session's quotas — one unit of work, a single
 * statement — or says which window is full and until when (a second read,
 * on that path only). `now` is this daemon's clock; windows are aligned to
 * UTC, so daemons agree on them within their clocks' skew.
 */
export async function takeQuota(
  store: Store,
  set: QuotaSet | undefined,
  key: CallKeyOf & { argsSha256: string },
  action: string,
  signal?: AbortSignal,
  now = Date.now(),
): Promise<QuotaDecision> {
  const counters = countersFor(set, action, now);
  if (counters.length === 0) return { kind: 'free' };
  // The call's signal: stopped while its count waits (for a lock), it leaves uncounted (rejected with the stop).
  const taken = await store.transaction((tx) => tx.quotas.take(key, counters), { signal });
  if (taken === 'counted') return { kind: 'counted', counters };
  if (taken === 'stored') return { kind: 'stored' };
  const usage = await store.read((tx) => tx.quotas.usage(key.userId, counters));
  return { kind: 'limited', refusal: refusalOf(set!, counters, usage, now) };
}

/**
 * The full window that ends last (a call can pass only once every window
 * allows it). Raced by a window that just ended, none may look full any
 * more: then the soonest end is the honest answer.
 */
function refusalOf(set: QuotaSet, counters: readonly QuotaCounter[], usage: readonly QuotaUse[], now: number): QuotaRefusal {
  const endOf = (c: QuotaCounter) => c.windowStart + PERIOD_MS[c.period];
  const isFull = (c: QuotaCounter) => usage.some((u) => u.scope === c.scope && u.period === c.period && u.windowStart >= c.windowStart && u.used >= c.allowed);
  const full = counters.filter(isFull);
  const byEnd = [...(full.length > 0 ? full : counters)].sort((a, b) => endOf(a) - endOf(b));
  const pick = full.length > 0 ? byEnd[byEnd.length - 1]! : byEnd[0]!;
  const pattern = pick.scope.slice(set.owner.length + 1);
  return { pattern, period: pick.period, limit: pick.allowed, retryAfterMs: Math.max(1, endOf(pick) - now) };
}

/** The `RATE_LIMITED` error of a call refused by a quota: what is full, and when to retry. */
export function rateLimitedError(module: string, method: string, r: QuotaRefusal): RateLimitedError {
  const seconds = Math.ceil(r.retryAfterMs / 1000);
  return {
    code: 'RATE_LIMITED',
    message:
      `quota reached: at most ${r.limit} call${r.limit === 1 ? '' : 's'} of ${r.pattern} per ${r.period} for this user; nothing ran and nothing was stored. ` +
      `Retry the same call (same tool_call_id) after retry_after_ms (${seconds} s), or tell the user the limit is reached`,
    module,
    method,
    retry_after_ms: r.retryAfterMs,
    quota: { pattern: r.pattern, period: r.period, limit: r.limit },
  };
}

/**
 * Takes a call's count back off its quotas: it turned out stored, a twin of a call awaiting approval, or
 * an id used with other arguments — not a call of its own. A failure only costs the user one count.
 */
export async function giveBack(store: Store, userId: string, counted: readonly QuotaCounter[] | undefined, log: Logger): Promise<void> {
  if (!counted) return;
  try {
    await store.transaction((tx) => tx.quotas.giveBack(userId, counted));
  } catch (err) {
    log.log('warn', 'a quota count could not be given back', { error: (err as Error).message });
  }
}
