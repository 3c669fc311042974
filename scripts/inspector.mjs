// `npm run inspector`: `toolgate serve --ws --port 8787 --dev --db ./data/toolgate.db`, and once it
// listens, one ready link on stdout — http://127.0.0.1:8787/#token=… — with a dev token for a local
// user (the demo's "alice" by default, so the demo's threads are there).
//
// The token is minted here, by this launcher, exactly as `toolgate dev-token` does: the daemon never
// sees it until the page opens a session, so it is in none of the daemon's logs. It travels in the
// URL fragment, which a browser never sends to a server; the inspector takes it off the address bar
// before anything else runs. It is printed once, to this terminal, on purpose.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const USAGE = `npm run inspector [-- --port N] [-- --db FILE] [-- --user ID]

Serves the daemon on WebSocket with the web inspector (serve --ws --dev) and prints a ready
http://127.0.0.1:PORT/#token=… link for a dev user. Ctrl+C stops it.

  --port N     port to listen on (default 8787; 0 picks a free one)
  --db FILE    SQLite file (default ./data/toolgate.db, the demo's)
  --user ID    the dev user the link signs in (default alice)
`;

const root = new URL('..', import.meta.url).pathname;
let values;
try {
  ({ values } = parseArgs({
    options: {
      port: { type: 'string', default: '8787' },
      db: { type: 'string', default: './data/toolgate.db' },
      user: { type: 'string', default: 'alice' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  }));
} catch (err) {
  process.stderr.write(`inspector: ${err.message}\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const child = spawn(process.execPath, [`${root}bin/toolgate.mjs`, 'serve', '--ws', '--port', values.port, '--dev', '--db', values.db], {
  stdio: ['ignore', 'inherit', 'pipe'],
  env: process.env,
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill('SIGTERM'));
// Through `npm run inspector`, a SIGTERM to npm ends npm and its shell but is not passed on: the
// parent changing is the one trace of it (the daemon does the same under npx: src/app/launcher-watch.ts).
const { watchLauncher } = await import(`${root}dist/src/app/launcher-watch.js`);
watchLauncher(process.env, () => child.kill('SIGTERM'));
// 'close', not 'exit': the daemon's last log lines ("stopped") are read and passed on before this exits.
child.on('close', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

// Pass the daemon's log lines through; the one that says where it listens triggers the link.
let linked = false;
createInterface({ input: child.stderr }).on('line', (line) => {
  // Through npm, a flag reaches this script only after `--`: say so where the daemon says "--port".
  if (line.startsWith('toolgate serve: cannot listen on ') && line.includes('choose another --port')) {
    line = line.replace('choose another --port (0 picks a free one) or --host', 'choose another port: npm run inspector -- --port N (0 picks a free one)');
  }
  process.stderr.write(`${line}\n`);
  if (linked) return;
  let listening;
  try {
    listening = JSON.parse(line).listening;
  } catch {
    return;
  }
  if (!listening) return;
  linked = true;
  void printLink(listening.host, listening.port);
});

async function printLink(host, port) {
  const { devToken } = await import(`${root}dist/src/auth/dev-token.js`);
  let token;
  try {
    token = await devToken({ user: values.user, name: values.user === 'alice' ? 'Alice' : undefined, ttlSeconds: 24 * 3600, env: process.env });
  } catch (err) {
    process.stderr.write(`inspector: no ready link (${err.message}); open http://${hostPart(host)}:${port}/ and paste a token\n`);
    return;
  }
  process.stdout.write(
    `\ntoolgate inspector for "${values.user}" (dev token, valid 24 h; reloading the page signs out):\n` +
      `http://${hostPart(host)}:${port}/#token=${token}\n\n`,
  );
}

function hostPart(host) {
  return host.includes(':') ? `[${host}]` : host;
}
