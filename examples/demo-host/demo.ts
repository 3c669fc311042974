/**
 * `toolgate demo` — the newcomer's first look (`npm start`), and an example
 * of a host built on `toolgate/client`.
 *
 * Starts the real daemon as a child process (`serve --stdio --dev`) through
 * the typed client, gets a dev bearer token for `alice` from
 * `toolgate dev-token` (as a person would), and plays a scripted host
 * session, printing every request, response and notification so a person can
 * follow what a host sees. The bearer token itself is never printed.
 *
 * It imports nothing of the daemon: only the client (in your own project,
 * `import { ToolgateClient } from 'toolgate/client'`).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ResponseError, ToolgateClient, defaultToolgateCommand, type HistoryGetResult, type Session, type ToolCallArgs, type ToolResponse, type ToolResultNotification } from '../../src/client/index.js';
import { Printer, clip, inlineJson, redacted, shortPath, summarizeUi } from './output.js';

/** The repository's demo database (`npm start` and `npm run inspector` both pass it), so the inspector shows the demo's threads. */
const REPO_DEMO_DB = 'data/toolgate.db';
const DEMO_USER = 'alice';
/** The file `toolgate dev-token` and `serve --dev` keep the local dev secret in, in the data folder. */
const DEV_SECRET_FILE = 'dev-bearer-secret';
const REQUEST_TIMEOUT_MS = 60_000;
const EXIT_TIMEOUT_MS = 10_000;

/** The package root (docs/ lives there), found from this file. */
const PACKAGE_ROOT: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return dir;
})();

/**
 * The daemon's data folder, as `toolgate serve` finds it (TOOLGATE_HOME, else
 * $XDG_DATA_HOME/toolgate, else ~/.local/share/toolgate): where the dev
 * secret lives, and the database when none is named. Only shown here — the
 * daemon and dev-token resolve it themselves.
 */
function dataFolder(env: NodeJS.ProcessEnv): string {
  if (env.TOOLGATE_HOME) return resolve(env.TOOLGATE_HOME);
  if (env.XDG_DATA_HOME?.startsWith('/')) return join(env.XDG_DATA_HOME, 'toolgate');
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
  return join(home, '.local', 'share', 'toolgate');
}

class DemoFailure extends Error {
  override name = 'DemoFailure';
}

/** `toolgate dev-token …`: a user bearer token signed with the configured secret or the data folder's dev secret. */
function mintDevToken(command: readonly string[], args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const [program, ...lead] = command;
  return new Promise((res, rej) => {
    execFile(program!, [...lead, 'dev-token', ...args], { env, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) rej(new DemoFailure(`toolgate dev-token failed: ${stderr.trim() || err.message}`));
      else res(stdout.trim());
    });
  });
}

// ───────────────────────────── the demo ─────────────────────────────

export interface DemoOptions {
  /**
   * Masks the secrets a path the demo prints may carry (a token or a configured secret typed into `--db`, say):
   * `toolgate demo` passes the command line's own masking. Paths only: the inspector link's token is printed on
   * purpose. Unmasked when not given.
   */
  maskPath?(text: string): string;
}

export async function runDemo(args: string[], opts: DemoOptions = {}): Promise<number> {
  const { values } = parseArgs({ args, options: { db: { type: 'string' } }, strict: true, allowPositionals: false });
  const p = new Printer();
  const s = p.style;
  const shown = (path: string) => (opts.maskPath ? opts.maskPath(shortPath(path)) : shortPath(path));
  // One environment for the token and the daemon, so both resolve the same secret (in the data folder).
  const env: NodeJS.ProcessEnv = { ...process.env };
  // --db, else TOOLGATE_DB, else toolgate.db in the data folder — as every toolgate command does.
  const named = values.db ?? env.TOOLGATE_DB;
  const dbArgs = values.db === undefined ? [] : ['--db', values.db];
  const dbPath = named === undefined ? join(dataFolder(env), 'toolgate.db') : /^postgres(ql)?:\/\//i.test(named) ? null : resolve(named);
  const userSecret = Boolean(env.TOOLGATE_BEARER_SECRET);
  if (!userSecret) delete env.TOOLGATE_BEARER_SECRET;
  const notes: string[] = [];
  if (!userSecret && env.TOOLGATE_BEARER_JWKS) {
    delete env.TOOLGATE_BEARER_JWKS;
    notes.push('TOOLGATE_BEARER_JWKS is ignored here: the demo signs its own token with the local dev secret');
  }

  const command = defaultToolgateCommand();
  const bin = command[1]!;
  let client: ToolgateClient | undefined;
  let shuttingDown = false;

  const forwardStderr = () => {
    const text = client?.stderr().trimEnd();
    if (!text) return;
    p.err(`--- daemon stderr (${client?.process?.pid ?? '?'}) ---`);
    p.err(text);
    p.err('--- end of daemon stderr ---');
  };

  try {
    // The token first: with no TOOLGATE_BEARER_SECRET this creates the data folder (0700) and the dev secret the daemon then reads.
    const token = await mintDevToken(command, ['--user', DEMO_USER, '--name', 'Alice', '--ttl', '3600'], env);
    p.hide(token);

    const tg = ToolgateClient.spawn({ command, args: ['--dev', ...dbArgs], env, token });
    client = tg;
    const proc = tg.process!;
    const spawnFailed = new Promise<never>((_, rej) => proc.on('error', (e) => rej(new DemoFailure(`cannot start the daemon: ${e.message}`))));
    const diedEarly = tg.exited.then((code) => {
      if (!shuttingDown) throw new DemoFailure(`the daemon exited unexpectedly (exit code ${code})`);
      return new Promise<never>(() => {});
    });
    spawnFailed.catch(() => {});
    diedEarly.catch(() => {});

    // A PostgreSQL URL may carry a password: it is named by where it came from, never printed.
    const pgFrom = values.db === undefined ? 'TOOLGATE_DB' : '--db';
    const shownDb = dbPath === null ? `PostgreSQL (the URL in ${pgFrom})` : shown(dbPath);
    const shownBin = shown(bin);
    const shownDbArgs = values.db === undefined ? '' : dbPath === null ? ' --db <your PostgreSQL URL>' : ` --db ${shown(resolve(values.db))}`;
    p.line(s.bold('toolgate demo — a scripted host session against the real daemon'));
    p.line(`  database  ${shownDb}`);
    p.line(`  daemon    node ${shownBin} serve --stdio --dev${shownDbArgs}   (pid ${proc.pid})`);
    p.line(
      `  bearer    a dev token for "${DEMO_USER}", signed with ${
        userSecret ? 'TOOLGATE_BEARER_SECRET from your environment' : `the dev secret ${shown(join(dataFolder(env), DEV_SECRET_FILE))}`
      } (by \`toolgate dev-token\`)`,
    );
    for (const n of notes) p.line(`  note      ${n}`);
    p.line(s.dim('  legend    → request   ← response   ⇠ notification'));

    let stepNo = 0;
    const step = (title: string, explain?: string) => {
      p.line();
      p.line(s.bold(`${++stepNo}. ${title}`));
      if (explain) p.line(s.dim(`   ${explain}`));
    };

    /** Sends a request through `send`, prints both directions; a JSON-RPC error is printed and rethrown. */
    const call = async <T>(method: string, shown: unknown, send: () => Promise<T>, opts: { quiet?: boolean } = {}): Promise<T> => {
      if (!opts.quiet) {
        p.line(`   ${s.req('→')} ${s.bold(method)}`);
        if (shown !== undefined) p.json(shown);
      }
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, rej) => {
        timer = setTimeout(() => rej(new DemoFailure(`${method}: no response within ${REQUEST_TIMEOUT_MS / 1000}s`)), REQUEST_TIMEOUT_MS);
      });
      try {
        const result = await Promise.race([send(), timeout, spawnFailed, diedEarly]);
        if (!opts.quiet) {
          p.line(`   ${s.res('←')} result`);
          p.json(result);
        }
        return result;
      } catch (err) {
        if (err instanceof ResponseError) {
          p.line(`   ${s.res('←')} ${s.bad('error')}`);
          p.json({ code: err.code, message: err.message, data: err.data });
          throw new DemoFailure(`${method} failed: JSON-RPC error ${err.code} ${err.message}`);
        }
        throw err;
      } finally {
        clearTimeout(timer);
      }
    };

    /** A tool call: the notifications that arrived before the response, then the response. */
    const invoke = async (
      label: string,
      session: Session,
      threadId: string,
      toolCallId: string,
      args: ToolCallArgs,
    ): Promise<{ response: ToolResponse; text: string; notes: ToolResultNotification[] }> => {
      p.line(`   ${s.req('→')} ${s.bold('tool/invoke')}  ${s.dim(`(${label})`)}`);
      p.json({ session_id: session.id, thread_id: threadId, tool_call_id: toolCallId, args });
      const { response, notifications: results } = await call('tool/invoke', undefined, () => session.invokeWithNotifications(threadId, toolCallId, args), {
        quiet: true,
      });
      results.forEach((n, i) => {
        p.line(`   ${s.note('⇠')} ${s.bold('tool/result')}  ${s.dim(`(notification ${i + 1} of ${results.length}, arrived before the response)`)}`);
        p.line(`     status: ${n.status} · final: ${n.final} · tool_call_id: ${n.tool_call_id} · thread_id: ${n.thread_id}`);
        p.line(`     ui_schema: ${summarizeUi(n.ui_schema)}`);
        if (n.result) p.line(clip(`     result: ${inlineJson(n.result)}`, p.width));
        if (n.error) p.line(clip(`     error: ${inlineJson(n.error)}`, p.width));
      });
      p.line(`   ${s.res('←')} result`);
      const text = response.content?.[0]?.text;
      if (typeof text !== 'string') throw new DemoFailure('tool/invoke answered without content[0].text');
      p.json({ ...response, content: response.content.map((c) => ({ ...c, text: `‹${Buffer.byteLength(c.text)} bytes of JSON text›` })) });

      if (results.length === 0) throw new DemoFailure(`${toolCallId}: no tool/result notification arrived before the response`);
      const last = results[results.length - 1]!;
      if (!last.final || results.slice(0, -1).some((n) => n.final)) throw new DemoFailure(`${toolCallId}: only the last tool/result may be final`);
      if (last.status !== response.status) throw new DemoFailure(`${toolCallId}: final notification says ${last.status}, the response ${response.status}`);
      return { response, text, notes: results };
    };

    // 1. initialize
    step('initialize', 'The host introduces itself; the daemon describes the one tool the model gets.');
    const initParams = { protocol_version: '1' as const, client_info: { name: 'toolgate-demo', version: '1' } };
    await call('initialize', initParams, () => tg.initialize(initParams));

    // 2. session/open
    step('session/open', `Open a session for "${DEMO_USER}" with her bearer token (never printed).`);
    let session!: Session;
    await call('session/open', { auth: { type: 'bearer', token: redacted(token) } }, async () => {
      session = await tg.openSession(); // the client's default token: the one it was made with
      return session.info;
    });

    // 3. skills/list
    step('skills/list', 'The skills (SKILL.md files) the agent may read to learn the actions.');
    await call('skills/list', { session_id: session.id }, () => session.skills());

    // 4. calendar.create
    const threadId = `demo-${new Date().toISOString().replace(/[-:.]/g, '')}`;
    const day = tomorrow();
    step(
      'tool/invoke calendar.create',
      `The model calls project_cli; the host adds session, thread (${threadId}) and tool_call_id.`,
    );
    const create = await invoke('the model wrote only `args`', session, threadId, 'call-1', {
      module: 'calendar',
      method: 'create',
      input: {
        title: 'Coffee with Bob',
        start_at: `${day.date}T10:00:00${day.offset}`,
        end_at: `${day.date}T10:30:00${day.offset}`,
        location: 'Corner café',
      },
    });
    if (create.response.status !== 'success') throw new DemoFailure(`calendar.create did not succeed: ${create.text}`);

    // 5. the projection
    step('the text the model gets', 'content[0].text — the full JSON projection, nothing summarised or cut:');
    p.line(create.text); // printed whole, never clipped
    const projected = JSON.parse(create.text) as { status?: string; module?: string; method?: string };
    p.line(s.dim(`   (${Buffer.byteLength(create.text)} bytes; status=${projected.status}, ${projected.module}.${projected.method})`));

    // 6. calendar.read day
    step('tool/invoke calendar.read (day)', `Read back ${day.date} in ${day.timeZone}.`);
    const read = await invoke('day mode', session, threadId, 'call-2', {
      module: 'calendar',
      method: 'read',
      input: { mode: 'day', date: day.date, timezone: day.timeZone },
    });
    if (read.response.status !== 'success') throw new DemoFailure(`calendar.read did not succeed: ${read.text}`);
    const readData = (JSON.parse(read.text) as { data?: { count?: number; items?: Array<{ id?: string }> } }).data;
    const createdId = (JSON.parse(create.text) as { data?: { event?: { id?: string } } }).data?.event?.id;
    const found = readData?.items?.some((e) => e.id === createdId) ?? false;
    p.line(
      `   ${found ? s.ok('✓') : s.bad('✗')} ${readData?.count ?? 0} event(s) that day; the one just created (${createdId}) is ${found ? '' : 'NOT '}among them` +
        ((readData?.count ?? 0) > 1 ? s.dim(' — earlier demo runs left theirs too') : ''),
    );
    if (!found) throw new DemoFailure('calendar.read does not return the event calendar.create just made');

    // 7. a bad call
    step('a bad call: calendar.read with date "tomorrow"', 'A tool-level failure is a successful JSON-RPC response with status "failure".');
    const bad = await invoke('deliberately invalid', session, threadId, 'call-3', {
      module: 'calendar',
      method: 'read',
      input: { mode: 'day', date: 'tomorrow' },
    });
    const badError = (JSON.parse(bad.text) as { error?: { code?: string; message?: string; issues?: Array<{ path?: string; message?: string }>; input_schema?: unknown } }).error;
    p.line(`     error.code:    ${badError?.code}`);
    p.line(`     error.message: ${badError?.message}`);
    for (const i of badError?.issues ?? []) p.line(clip(`     issue:         ${i.path ?? '?'}: ${i.message ?? inlineJson(i)}`, p.width));
    if (badError?.input_schema !== undefined) p.line(s.dim('     error.input_schema is included, so the model can correct its call'));
    if (bad.response.status !== 'failure' || badError?.code !== 'INVALID_ACTION_INPUT') {
      throw new DemoFailure(`expected status "failure" with INVALID_ACTION_INPUT, got ${bad.response.status} / ${badError?.code}`);
    }

    // 8. message/append
    step('message/append (assistant)', 'The host stores what the assistant finally said.');
    const answer = `Booked "Coffee with Bob" on ${day.date}, 10:00–10:30 at the Corner café.`;
    const worker = { status: 'success' as const, answer };
    await call('message/append', { session_id: session.id, thread_id: threadId, role: 'assistant', content: answer, worker_output: worker }, () =>
      session.append(threadId, 'assistant', answer, worker),
    );

    // 9. history/get context
    step('history/get (context view)', 'What an agent rebuilds its context from, oldest first.');
    p.line(`   ${s.req('→')} ${s.bold('history/get')}`);
    p.json({ session_id: session.id, thread_id: threadId, view: 'context' });
    const history: HistoryGetResult = await call('history/get', undefined, () => session.history(threadId, { view: 'context' }), { quiet: true });
    p.line(`   ${s.res('←')} result  ${s.dim(`(${history.messages.length} messages, next_before: ${JSON.stringify(history.next_before)})`)}`);
    for (const m of history.messages) {
      const flat = m.content.replace(/\s*\n\s*/g, ' ');
      const head = flat.length > 100 ? `${flat.slice(0, 100)}…` : flat;
      const tag = m.role === 'tool' ? `${m.role} (${m.tool_call_id ?? '?'}, ${m.status ?? '?'})` : m.role;
      p.line(`     ${tag.padEnd(26)} ${head}`);
    }
    const texts = new Map([create, read, bad].map((c) => [c.response.tool_call_id, c.text]));
    const toolMessages = history.messages.filter((m) => m.role === 'tool');
    if (toolMessages.length !== texts.size) throw new DemoFailure(`expected ${texts.size} tool messages in the history, got ${toolMessages.length}`);
    for (const m of toolMessages) {
      const text = m.tool_call_id === undefined ? undefined : texts.get(m.tool_call_id);
      const same = text !== undefined && m.content === text;
      p.line(
        `   ${same ? s.ok('✓') : s.bad('✗')} ${m.tool_call_id}: history content ${same ? '===' : '!=='} the text tool/invoke returned` +
          (same ? s.dim(` (${Buffer.byteLength(text)} bytes, byte for byte)`) : ''),
      );
      if (!same) throw new DemoFailure(`history content of ${m.tool_call_id} differs from the text tool/invoke returned`);
    }
    if (!history.messages.some((m) => m.role === 'assistant' && m.content === answer)) {
      throw new DemoFailure('the assistant message is missing from the history');
    }

    // 10. shutdown + exit
    step('shutdown + exit', 'As in LSP: the daemon finishes, closes the database and exits.');
    await call('shutdown', undefined, () => tg.shutdown().then(() => null));
    shuttingDown = true;
    p.line(`   ${s.req('→')} ${s.bold('exit')} ${s.dim('(notification)')}`);
    await tg.exit();
    const code = await waitExit(tg);
    if (code !== 0) throw new DemoFailure(`the daemon exited with code ${code}`);
    p.line(`     daemon exited with code 0`);

    p.line();
    p.line(s.bold('Done.') + ` Rerun it any time: a new thread starts each run (the database ${shownDb} is kept).`);
    p.line(s.dim(`Next: ${shown(join(PACKAGE_ROOT, 'docs', 'protocols'))}/ for the full protocol; \`node ${shownBin} dev-token --user ${DEMO_USER}\` for a token of your own.`));
    // A dev token handed out on purpose (stdout only): the inspector needs one to open a session.
    const inspectorToken = await mintDevToken(command, ['--user', DEMO_USER, '--name', 'Alice', '--ttl', String(24 * 3600)], env);
    p.line();
    // The link's token is signed with the data folder's dev secret, which every serve --dev uses. `npm run
    // inspector` exists only in the repository, and serves the repository's ./data database.
    const inRepo = dbPath === join(PACKAGE_ROOT, REPO_DEMO_DB) && existsSync(join(PACKAGE_ROOT, 'scripts', 'inspector.mjs')) && resolve(process.cwd()) === PACKAGE_ROOT;
    const serveCmd = inRepo ? '`npm run inspector`' : `\`node ${shownBin} serve --ws --port 8787 --dev${shownDbArgs}\``;
    p.line(s.bold('See it in the browser:') + ` ${serveCmd},`);
    p.line('then open this link: it signs in as alice with a dev token (valid 24 h, local dev secret only; the page takes');
    p.line('the token off the address bar, and reloading the page signs out):');
    p.line(`http://127.0.0.1:8787/#token=${inspectorToken}`);
    return 0;
  } catch (err) {
    shuttingDown = true;
    p.line();
    const message = err instanceof DemoFailure ? err.message : `${(err as Error)?.message ?? String(err)}`;
    p.err(`${p.style.bad('toolgate demo failed:')} ${message}`);
    // After a failure: close stdin (a clean goodbye for the daemon), then SIGTERM, then SIGKILL.
    await client?.close().catch(() => {});
    forwardStderr();
    return 1;
  } finally {
    await client?.close().catch(() => {});
  }
}

/** After `exit`: the daemon should go by itself; if it does not, it is nudged and the demo fails. */
async function waitExit(client: ToolgateClient): Promise<number | null> {
  const proc = client.process!;
  const within = (ms: number) => Promise.race([client.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms).unref())]);
  let code = await within(EXIT_TIMEOUT_MS);
  if (code !== 'timeout') return code;
  proc.stdin.end();
  code = await within(2000);
  if (code !== 'timeout') throw new DemoFailure(`the daemon did not exit after "exit"; it stopped only when its stdin closed`);
  proc.kill('SIGTERM');
  code = await within(3000);
  if (code === 'timeout') {
    proc.kill('SIGKILL');
    await client.exited;
  }
  throw new DemoFailure(`the daemon did not exit within ${EXIT_TIMEOUT_MS / 1000}s after "exit" and had to be killed`);
}

/** Tomorrow in the local time zone: its date, the UTC offset at 10:00 that day, and the zone's IANA name. */
function tomorrow(): { date: string; offset: string; timeZone: string } {
  const now = new Date();
  const d = new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1, 10, 0, 0);
  const pad = (n: number) => String(n).padStart(2, '0');
  const date = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  const minutes = -d.getTimezoneOffset();
  const sign = minutes < 0 ? '-' : '+';
  const offset = `${sign}${pad(Math.floor(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
  let timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    timeZone = 'UTC';
  }
  // A zone name the runtime cannot resolve would make the offset and the zone disagree: fall back to UTC.
  if (timeZone === 'UTC' && minutes !== 0) {
    const u = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
    return { date: `${u.getUTCFullYear()}-${pad(u.getUTCMonth() + 1)}-${pad(u.getUTCDate())}`, offset: '+00:00', timeZone: 'UTC' };
  }
  return { date, offset, timeZone };
}


// Run directly (`node dist/examples/demo-host/demo.js [--db FILE]`) as well as through `toolgate demo`.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const code = await runDemo(process.argv.slice(2));
  process.stdout.write('', () => process.exit(code));
}
