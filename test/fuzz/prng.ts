/**
 * A small seeded PRNG (mulberry32) and value generators for the fuzz suite.
 * The seed comes from FUZZ_SEED or is drawn at random; every failure names it,
 * so `FUZZ_SEED=<n> node --test dist/test/fuzz/<file>.js` replays the run.
 */
import { randomInt } from 'node:crypto';

export const SEED: number = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) >>> 0 : randomInt(2 ** 31);

export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  bool(p = 0.5): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** A derived generator, so one case's draws do not shift every later case. */
  fork(salt: number): Rng {
    return new Rng((this.state ^ Math.imul(salt + 1, 0x9e3779b1)) >>> 0);
  }
}

const ODD_STRINGS = [
  '', ' ', '\u0000', '\n', '\r\n\r\n', '"', '\\', '\\u0000', '{', '}', '[]', 'null', '-1', '1e309', 'NaN', '💥', '\ud800', '\u202e',
  '$(touch /tmp/x)', '`id`', "'; DROP TABLE messages; --", '../../etc/passwd', '%00', 'Content-Length: 5', 'eyJ', 'a.b.c', '2026-02-30',
  '0000-01-01', '9999-12-31', '2026-04-21T10:00:00+08:00', '2026-04-21T10:00:00', 'Asia/Shanghai', 'Mars/Olympus', 'calendar.*',
  // What no engine stores as it is (contract section 21): NUL and unpaired surrogates, alone and inside text.
  'a\u0000b', '\udc00', 'a\udc00b', 'tail\ud83d', '\udfff\ud800', 'k\ud800', 'k\udc00',
];

/** Characters no string of a call may hold: U+0000, a lone high surrogate, a lone low one. */
export const MALFORMED_CHARS = ['\u0000', '\ud800', '\udbff', '\udc00', '\udfff'] as const;

/** `s` with one malformed character spliced in at a random place. */
export function taint(rng: Rng, s: string): string {
  const at = rng.int(s.length + 1);
  return `${s.slice(0, at)}${rng.pick(MALFORMED_CHARS)}${s.slice(at)}`;
}

export function randomString(rng: Rng, max = 40): string {
  const s = plainRandomString(rng, max);
  // Any string may carry a NUL or a lone surrogate, wherever it goes (ids, keys, content, envelopes).
  return rng.bool(0.05) ? taint(rng, s) : s;
}

function plainRandomString(rng: Rng, max: number): string {
  switch (rng.int(4)) {
    case 0:
      return rng.pick(ODD_STRINGS);
    case 1: {
      let s = '';
      const n = rng.int(max);
      for (let i = 0; i < n; i++) s += String.fromCharCode(rng.bool(0.9) ? 32 + rng.int(95) : rng.int(0x3000));
      return s;
    }
    case 2:
      return 'x'.repeat(rng.int(rng.bool(0.1) ? 20_000 : max));
    default:
      return `${rng.pick(['k', 'key', 'title', 'evt_', 'inv_', 'user-', ''])}${rng.int(1000)}`;
  }
}

export function randomJson(rng: Rng, depth = 0): unknown {
  const k = rng.int(depth > 3 ? 5 : 8);
  switch (k) {
    case 0:
      return null;
    case 1:
      return rng.bool();
    case 2:
      return rng.pick([0, -1, 1, 2 ** 53, -(2 ** 31), 1.5, 1e308, 50, 51, 500, 501]);
    case 3:
    case 4:
      return randomString(rng);
    case 5:
    case 6: {
      const o: Record<string, unknown> = {};
      const n = rng.int(5);
      for (let i = 0; i < n; i++) o[rng.bool(0.7) ? rng.pick(FIELD_NAMES) : randomString(rng, 10)] = randomJson(rng, depth + 1);
      return o;
    }
    default:
      return Array.from({ length: rng.int(4) }, () => randomJson(rng, depth + 1));
  }
}

/** Every field name some action or method reads, so random objects hit real code paths. */
export const FIELD_NAMES = [
  'mode', 'date', 'timezone', 'start_at', 'end_at', 'event_id', 'title', 'location', 'description', 'items', 'user_ids', 'invite_id',
  'query', 'phone', 'limit', 'key', 'content', 'session_id', 'thread_id', 'tool_call_id', 'args', 'module', 'method', 'input', 'role',
  'worker_output', 'status', 'answer', 'view', 'before', 'name', 'path', 'auth', 'type', 'token', 'job_id', 'agent', 'enabled_skills',
  'protocol_version', '__proto__', 'constructor',
];

/** Runs `body`, and on failure says how to replay it. */
export async function withSeed<T>(label: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    e.message = `${e.message}\n[fuzz] ${label} failed with FUZZ_SEED=${SEED} — replay: FUZZ_SEED=${SEED} node --test dist/test/fuzz/`;
    throw e;
  }
}
