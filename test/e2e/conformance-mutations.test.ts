/**
 * The conformance runner's mutation suite: a real toolgate behind a fault
 * injector (test/fixtures/fault-proxy.ts) that breaks one documented rule at a
 * time on the wire. The runner must pass through the proxy when it breaks
 * nothing, and fail — in the check that names the rule — for every variant.
 * Every variant runs against one daemon in this process (each run uses fresh
 * ids; test/helpers/in-process.ts): the WebSocket ones on its own listener,
 * the stdio ones each on a stdio connection of their own over an in-memory
 * pair, the proxy between (`pipeStdioFaultProxy`). The spawned daemon under the
 * runner is conformance.test.ts's and conformance-ws.test.ts's. A few run at a
 * time.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { runConformance, type RunReport } from '../../src/conformance/runner.js';
import { streamTransport, wsTransport } from '../../src/conformance/transport.js';
import { WireValidator } from '../../src/conformance/wire-validator.js';
import { RULES, pipeStdioFaultProxy, startWsFaultProxy } from '../fixtures/fault-proxy.js';
import { REPO_ROOT, tempDir } from '../helpers/repo.js';
import { TEST_BEARER_SECRET, mintBearer } from '../helpers/tokens.js';
import { startInProcess, type InProcessHost } from '../helpers/in-process.js';
/** One validator for every run: it compiles each schema once (per run, compiling was a third of this file's CPU). */
const validator = new WireValidator(join(REPO_ROOT, 'schemas'));

type Transport = 'stdio' | 'ws';

/** Each rule the proxy can break, the transport it is tried on, and the check that must catch it. */
const VARIANTS: Array<[rule: string, transport: Transport, caughtBy: RegExp]> = [
  ['replay-silent', 'stdio', /the same tool_call_id with the same args/],
  ['duplicate-silent', 'ws', /DUPLICATE_TOOL_CALL_ID/],
  ['token-echo-tail', 'stdio', /wrongly signed bearer token/],
  ['second-initialize-ok', 'stdio', /a second initialize/],
  ['initialize-strict', 'ws', /unknown params ignored/],
  ['unknown-method-code', 'ws', /an unknown method after initialize/],
  ['oversized-batch-writes', 'ws', /more than \d+ items/],
  ['create-without-ui', 'ws', /a created event reads back/],
  ['batch-items-without-ui', 'ws', /batch: one partial notification per item/],
  ['memory-update-stores-nothing', 'ws', /memory: update reads back/],
  ['update-stores-nothing', 'ws', /update changes what reads back/],
  ['read-returns-nothing', 'ws', /a created event reads back/],
  ['read-count-off', 'ws', /a created event reads back/],
  ['delete-stores-nothing', 'ws', /delete answers event_deleted/],
  ['forget-stores-nothing', 'ws', /forget removes it/],
  ['response-before-notifications', 'ws', /notifications reach the caller before the response/],
  ['unsubscribe-ignored', 'ws', /another connection receives/],
  ['subscribed-twice', 'stdio', /thread\/subscribe on the calling connection/],
  ['framing-errors-silent', 'stdio', /framing:/],
  ['expired-token-accepted', 'stdio', /without exp/],
  ['credential-in-append-stored', 'ws', /credentials:/],
  ['credential-in-input-runs', 'ws', /credentials:/],
  ['history-before-ignored', 'stdio', /paged with before/],
  ['limit-clamped', 'ws', /limits:/],
  ['other-user-ignored', 'ws', /naming another user/],
  ['unknown-agent-default', 'ws', /an unknown agent is UNKNOWN_AGENT/],
  ['skills-not-narrowed', 'ws', /enabled_skills narrows/],
  ['input-schema-other', 'ws', /tool failures:/],
  ['batch-item-dropped', 'ws', /batch: one partial notification per item/],
  ['data-keys-reversed', 'ws', /bytes:/],
  ['history-text-differs', 'ws', /byte-identical/],
  ['shutdown-ignored', 'stdio', /shutdown:/],
  ['ask-auto-approved', 'ws', /approval: an ask call \(--ask-agent\) waits/],
  ['ask-auto-approved', 'stdio', /approval: an ask call \(--ask-agent\) waits/],
  ['digest-unchecked', 'ws', /a wrong digest is ARGS_MISMATCH/],
  ['deny-runs', 'ws', /call\/deny ends an ask call as the failure APPROVAL_DENIED/],
];

/** The daemon's agent profiles: the default one, and `asker`, whose memory.forget waits for approval. */
const CONFIG = {
  agents: {
    default: { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.read', 'memory.*'] },
    asker: { enabled_skills: ['memory'], allowed_actions: ['memory.*'], approval: { ask: ['memory.forget'] } },
  },
};
let config: string;

/** How many runs go at once: enough to overlap their waits (they share this process and its one core). */
const AT_ONCE = 8;

let host: InProcessHost;
let tokens: { a: string; b: string };
const queue: Array<() => void> = [];
let running = 0;

async function slot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= AT_ONCE) await new Promise<void>((r) => queue.push(r));
  running++;
  try {
    return await work();
  } finally {
    running--;
    queue.shift()?.();
  }
}

/** One run of the runner through the proxy with `rule`; its report and its lines. */
function runThrough(rule: string, transport: Transport): Promise<{ report: RunReport; lines: string[] }> {
  return slot(async () => {
    const lines: string[] = [];
    // settleMs: how long the runner waits to be sure a notification does not come (three times a WebSocket run),
    // and a tenth of its ceiling for an error frame or an exit. Its default, 300 ms, is for a daemon across a
    // network; this one is in process, where what must come arrives within milliseconds of the answer before it
    // (a notification is sent before its call's response): at 150 ms each variant is still caught by its check,
    // and the file took ~10 s of wall time instead of ~19 s.
    const common = { askAgent: 'asker', tokenA: tokens.a, tokenB: tokens.b, secret: TEST_BEARER_SECRET, timeoutMs: 15_000, settleMs: 150, validator, write: (l: string) => lines.push(l) };
    if (transport === 'ws') {
      const proxy = await startWsFaultProxy(`ws://127.0.0.1:${host.port}/rpc`, rule);
      try {
        const report = await runConformance({ ...common, open: () => wsTransport(proxy.url), multiConnection: true });
        return { report, lines };
      } finally {
        await proxy.close();
      }
    }
    const report = await runConformance({ ...common, open: async () => stdioThrough(rule), multiConnection: false });
    return { report, lines };
  });
}

/** A stdio connection of the daemon with the proxy in front: the host's end, as a process's stdin/stdout would be. */
function stdioThrough(rule: string) {
  const daemon = host.openStdio();
  const toProxy = new PassThrough();
  const fromProxy = new PassThrough();
  pipeStdioFaultProxy(rule, toProxy, fromProxy, daemon.fromDaemon, daemon.toDaemon, TEST_BEARER_SECRET);
  // The host's end of input ends the daemon's; the daemon's end of output (exit) ends the host's, after what it wrote.
  toProxy.on('end', () => daemon.toDaemon.end());
  daemon.fromDaemon.on('end', () => fromProxy.end());
  return streamTransport(fromProxy, toProxy, `stdio through the proxy (${rule})`);
}

type Outcome = { report: RunReport; lines: string[] };

/** Every run, started at once in `before` (a few at a time by `slot`); each test awaits its own. */
const runs = new Map<string, Promise<Outcome>>();
const outcome = (rule: string, transport: Transport) => runs.get(`${rule} ${transport}`) ?? assert.fail(`no run for ${rule} ${transport}`);

describe('the conformance runner against a toolgate with one rule broken at a time', () => {
  before(async () => {
    // The in-process executor: the rules are the protocol's, and a call costs no process start.
    config = join(tempDir(), 'toolgate.config.json');
    writeFileSync(config, JSON.stringify(CONFIG));
    host = await startInProcess({ transport: 'ws', executor: 'inprocess', args: ['--config', config] });
    const [a, b] = await Promise.all([mintBearer('mut-alice'), mintBearer('mut-bob')]);
    tokens = { a, b };
    const all: Array<[string, Transport]> = [['none', 'stdio'], ['none', 'ws'], ...VARIANTS.map(([r, t]): [string, Transport] => [r, t])];
    for (const [rule, transport] of all) {
      const run = runThrough(rule, transport);
      run.catch(() => {}); // awaited (and reported) by its test
      runs.set(`${rule} ${transport}`, run);
    }
  });
  after(async () => {
    await Promise.allSettled(runs.values());
    await host.stop();
  });

  test('every rule of the proxy has a variant here', () => {
    assert.deepEqual([...new Set(VARIANTS.map(([r]) => r))].sort(), Object.keys(RULES).filter((r) => r !== 'none').sort());
  });

  for (const transport of ['stdio', 'ws'] as const) {
    test(`through a proxy that breaks nothing (${transport}), every check passes`, async () => {
      const { report, lines } = await outcome('none', transport);
      assert.equal(report.failed, 0, lines.join('\n'));
      assert.ok(report.passed >= 30, lines.join('\n'));
    });
  }

  const caught: string[] = [];
  for (const [rule, transport, caughtBy] of VARIANTS) {
    test(`${rule} (${transport}) is caught by: ${caughtBy.source}`, async () => {
      const { report, lines } = await outcome(rule, transport);
      const text = lines.join('\n');
      assert.ok(report.failed > 0, `the runner passed a daemon with the fault ${rule}:\n${text}`);
      const failed = lines.filter((l) => l.startsWith('FAIL'));
      assert.ok(
        failed.some((l) => caughtBy.test(l)),
        `${rule} failed other checks than the one for its rule:\n${text}`,
      );
      caught.push(rule);
    });
  }

  test('the mutation score', (t) => {
    t.diagnostic(`mutation score: ${caught.length}/${VARIANTS.length} variants caught`);
    assert.equal(caught.length, VARIANTS.length);
  });
});
