/**
 * Loaded into a daemon under count (`node --import …/count-preload.js`,
 * bench/count-work.ts): counts, between two SIGUSR2, every JSON.stringify,
 * JSON.parse and zod parse the process makes — the daemon's own serializing
 * and validating per call, exact rather than sampled.
 *
 * - JSON: the globals are wrapped before any module is loaded; each call
 *   while armed is tallied by its caller (the first frame outside this file).
 * - zod: V8's precise coverage counts every invocation of the functions
 *   behind `.parse`/`.safeParse`/`.parseAsync`/`.safeParseAsync`,
 *   `z.safeParse(schema, …)` and `~standard.validate` alike (zod/v4/core
 *   parse.js), by the factory that made it (`_safeParse`, `_parse`, …).
 *
 * - the daemon's own walks and lookups: the same coverage counts every
 *   invocation of the functions named in WATCHED (the secret scan's and the
 *   well-formedness check's walks of a value, the credential-field walk, the
 *   combined screen, the action table's lookup, the args digest), by name.
 *
 * First SIGUSR2: counting starts, `$COUNT_OUT.armed` is written. Second: the
 * counts since the first are written to `$COUNT_OUT` as JSON.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

const out = process.env.COUNT_OUT;
if (!out) throw new Error('count-preload: COUNT_OUT is not set');

let armed = false;
const tallies = { stringify: new Map<string, number>(), parse: new Map<string, number>() };

/** The first frame of the stack outside this file: who made the call. */
function caller(): string {
  const lines = (new Error().stack ?? '').split('\n').slice(2);
  const line = lines.find((l) => !l.includes('count-preload')) ?? '?';
  return line.trim().replace(/^at /, '').replace(/file:\/\/\S*?\/(dist|node_modules)\//, '$1/');
}

function tally(map: Map<string, number>): void {
  if (!armed) return;
  const at = caller();
  map.set(at, (map.get(at) ?? 0) + 1);
}

const { stringify, parse } = JSON;
JSON.stringify = function countedStringify(this: JSON, ...args: Parameters<typeof stringify>) {
  tally(tallies.stringify);
  return stringify.apply(this, args);
} as typeof stringify;
JSON.parse = function countedParse(this: JSON, ...args: Parameters<typeof parse>) {
  tally(tallies.parse);
  return parse.apply(this, args);
} as typeof parse;

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

interface FunctionCoverage {
  functionName: string;
  ranges: Array<{ startOffset: number; endOffset: number; count: number }>;
}

/** Functions of ours counted by name, per file (dist/src/<folder>/<file>.js): what each walks or looks up. */
const WATCHED: Record<string, Record<string, string>> = {
  'codec/secret-scan.js': { findSecretIn: 'secret walk (findSecretIn)' },
  'codec/well-formed.js': { findMalformedString: 'well-formed walk (findMalformedString)' },
  'codec/redact.js': { hasCredentialField: 'credential-field walk (hasCredentialField)' },
  'codec/screen.js': { screenClean: 'one screen of a request (screenClean)' },
  'cli-router/registry.js': { lookupAction: 'action lookup (lookupAction)' },
  'codec/canonical-json.js': { argsSha256: 'args digest (argsSha256)' },
};

/** zod's parse factories per script: once reset, V8 lists only the functions run since, so they are kept from the first take. */
const factories: Record<string, Array<{ name: string; startOffset: number; endOffset: number }>> = {};

/** Invocations of the functions behind every zod parse entry point, since the last take. */
async function zodParses(): Promise<{ zod: Record<string, number>; walks: Record<string, number> }> {
  const { result } = (await session.post('Profiler.takePreciseCoverage')) as unknown as { result: Array<{ url: string; functions: FunctionCoverage[] }> };
  const counts: Record<string, number> = {};
  const walks: Record<string, number> = {};
  for (const script of result) {
    const ours = /\/dist\/src\/([^/]+\/[^/]+\.js)$/.exec(script.url);
    const watched = ours ? WATCHED[ours[1]!] : undefined;
    if (watched) {
      for (const f of script.functions) {
        const label = Object.hasOwn(watched, f.functionName) ? watched[f.functionName] : undefined;
        const count = f.ranges[0]?.count ?? 0;
        if (label && count > 0) walks[label] = (walks[label] ?? 0) + count;
      }
    }
    if (!/\/node_modules\/zod\/v4\/core\/parse\.js$/.test(script.url)) continue;
    // The factories (`_safeParse = (_Err) => …`) ran at load; the functions they return are the parses.
    const outer = (factories[script.url] ??= script.functions
      .filter((f) => /^_(safe)?(parse|encode|decode)(Async)?$/i.test(f.functionName))
      .map((f) => ({ name: f.functionName, startOffset: f.ranges[0]!.startOffset, endOffset: f.ranges[0]!.endOffset })));
    for (const f of script.functions) {
      const [r] = f.ranges;
      if (!r || r.count === 0 || outer.some((o) => o.startOffset === r.startOffset)) continue;
      const parent = outer.find((o) => o.startOffset < r.startOffset && r.endOffset <= o.endOffset);
      if (parent) counts[parent.name] = (counts[parent.name] ?? 0) + r.count;
    }
  }
  return { zod: counts, walks };
}

const plain = (m: Map<string, number>) => Object.fromEntries([...m].sort((a, b) => b[1] - a[1]));

process.on('SIGUSR2', () => {
  void (async () => {
    if (!armed) {
      await zodParses();
      for (const m of Object.values(tallies)) m.clear();
      armed = true;
      writeFileSync(`${out}.armed`, '');
      return;
    }
    armed = false;
    const { zod, walks } = await zodParses();
    writeFileSync(out, stringify({ stringify: plain(tallies.stringify), parse: plain(tallies.parse), zod, walks }));
  })();
});
