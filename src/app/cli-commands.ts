/**
 * Every `toolgate` command as data: its help text and the flags parseArgs
 * accepts (src/app/cli-help.ts renders and parses both from here).
 *
 * Adding a command: declare its spec below (`{…} satisfies CommandSpec`, so the
 * parsed flags are typed from it), list it in COMMANDS (the
 * top-level help and the help test walk that list), and dispatch it in
 * cli.ts with `parseCommand(SPEC, args)`. Adding a flag: add it to the spec —
 * the parser reads it from there, so an undocumented flag cannot exist.
 */
import type { CommandSpec } from './cli-help.js';

const DB_FLAG = { type: 'string', value: 'FILE|URL', description: 'SQLite file or postgres:// URL', default: '$TOOLGATE_DB, else toolgate.db in the data folder' } as const;
const CONFIG_FLAG = { type: 'string', value: 'FILE', description: 'agent profiles and limits, JSON or YAML (.yaml/.yml); see toolgate.config.example.json', default: 'one profile "default" with every skill and action' } as const;

export const SERVE = {
  name: 'serve',
  summary: 'run the daemon: stdio, WebSocket (with inspector, MCP over HTTP, AG-UI) or MCP on stdio',
  usage: [
    'serve --stdio [--db FILE] [--config FILE] [flags]',
    'serve --ws --port N [--host 127.0.0.1] [--db FILE] [--config FILE] [flags]',
    'serve --mcp [--db FILE] [--config FILE] [flags]',
  ],
  description:
    'Serves the one tool, project_cli, over exactly one transport. --stdio speaks JSON-RPC with LSP framing on ' +
    'stdin/stdout. --ws listens on HOST:PORT: JSON-RPC over WebSocket at /rpc (and /), MCP Streamable HTTP at /mcp, ' +
    'AG-UI streams at /threads/ID/events, calls and their approval at /threads/ID/calls/CALL_ID and /calls, ' +
    '/healthz, /readyz, /metrics (by default only for a loopback --host) and the web inspector at /; it prints {"listening":{"host","port"}} on stderr ' +
    'once ready. --mcp is an MCP server on stdio acting for the user of TOOLGATE_MCP_TOKEN. Logs are JSON lines on stderr. ' +
    'Stops cleanly on shutdown+exit, SIGTERM/SIGINT or end of stdin. SIGHUP reads --config again: agent profiles, ' +
    'call time limits, auth.max_token_lifetime_s and mcp.agent apply to the next calls; a file that does not validate changes nothing.',
  flags: {
    stdio: { type: 'boolean', description: 'JSON-RPC on stdin/stdout (Content-Length framing)' },
    ws: { type: 'boolean', description: 'WebSocket + HTTP server on --host/--port' },
    mcp: { type: 'boolean', description: 'MCP server on stdio (newline-delimited JSON-RPC)' },
    port: { type: 'string', value: 'N', description: '--ws: port to listen on; 0 picks a free one' },
    host: { type: 'string', value: 'HOST', description: '--ws: address to listen on', default: '127.0.0.1' },
    db: DB_FLAG,
    config: CONFIG_FLAG,
    executor: { type: 'string', value: 'KIND', description: 'subprocess (a project-cli process per call) or inprocess', default: 'subprocess' },
    dev: { type: 'boolean', description: 'without TOOLGATE_BEARER_SECRET/JWKS, create and use a development secret in the data folder' },
    'call-timeout-ms': { type: 'string', value: 'N', description: 'a tool call running longer fails with TIMEOUT', default: '30000' },
    'max-message-bytes': { type: 'string', value: 'N', description: 'largest JSON-RPC message accepted', default: '1048576' },
    'max-in-flight': { type: 'string', value: 'N', description: 'requests in progress per connection', default: '256' },
    'ping-interval-ms': { type: 'string', value: 'N', description: '--ws: keep-alive ping interval', default: '30000' },
    'shutdown-grace-ms': { type: 'string', value: 'N', description: 'how long shutdown waits for in-flight calls before it cancels them', default: 'call timeout + 5000' },
  },
  env: [
    'TOOLGATE_DB',
    'PGPASSWORD',
    'TOOLGATE_HOME',
    'TOOLGATE_BEARER_SECRET',
    'TOOLGATE_BEARER_JWKS',
    'TOOLGATE_BEARER_ISSUER',
    'TOOLGATE_BEARER_AUDIENCE',
    'TOOLGATE_SERVICE_KEY',
    'TOOLGATE_CREDENTIAL_KEY_FILE',
    'TOOLGATE_MCP_TOKEN',
    'TOOLGATE_MCP_AGENT',
    'TOOLGATE_LOG_LEVEL',
    'OTEL_TRACES_EXPORTER',
    'TOOLGATE_CLI_SNAPSHOT',
  ],
  examples: [
    'toolgate serve --ws --port 8787 --dev --db ./data/toolgate.db     # then open http://127.0.0.1:8787/',
    'TOOLGATE_BEARER_SECRET=… toolgate serve --stdio --config toolgate.config.yaml',
  ],
} satisfies CommandSpec;

export const DEV_TOKEN = {
  name: 'dev-token',
  summary: 'print a user bearer token signed with the configured HS256 secret (local use and demos)',
  usage: ['dev-token --user ID [--phone P] [--name N] [--role R] [--ttl SECONDS] [--db FILE]'],
  description:
    'Signs a JWT for user ID with TOOLGATE_BEARER_SECRET, or with the development secret in the data folder ' +
    '(created when missing, as serve --dev does; the data folder whatever --db says, so the token works with every ' +
    'serve --dev), and prints it on stdout. It cannot sign for a JWKS issuer.',
  flags: {
    user: { type: 'string', value: 'ID', description: 'the user id (`sub`); required' },
    phone: { type: 'string', value: 'P', description: '`phone` claim, used when the user is first provisioned' },
    name: { type: 'string', value: 'N', description: '`name` claim' },
    role: { type: 'string', value: 'R', description: '`role` claim' },
    ttl: { type: 'string', value: 'SECONDS', description: 'lifetime of the token', default: '86400' },
    db: { type: 'string', value: 'FILE|URL', description: 'accepted and ignored: the dev secret is in the data folder whatever --db says' },
  },
  env: ['TOOLGATE_BEARER_SECRET', 'TOOLGATE_BEARER_ISSUER', 'TOOLGATE_BEARER_AUDIENCE', 'TOOLGATE_DB', 'TOOLGATE_HOME'],
  examples: ['TOKEN=$(toolgate dev-token --user alice --name Alice --phone +6590000001)'],
} satisfies CommandSpec;

export const DEV_CREDENTIAL = {
  name: 'dev-credential',
  summary: 'print a 5-minute project-cli credential for one user and one action (dev data only), to try project-cli by hand',
  usage: ['dev-credential --user ID --action MODULE.METHOD [--db FILE]'],
  description:
    'Signs a controlled credential — what the daemon gives each project-cli call — for user ID and exactly one action, ' +
    'with the credential key of the data folder, records that key in the database (project-cli trusts only keys ' +
    'recorded there) and prints the credential on stdout. Refused unless the data folder holds the dev secret ' +
    '(serve --dev, npm start or dev-token made it), and when TOOLGATE_CREDENTIAL_KEY_FILE is set: real ' +
    'credentials are signed only inside the daemon. project-cli then needs TOOLGATE_DB naming the same database.',
  flags: {
    user: { type: 'string', value: 'ID', description: 'the user the action runs for (`sub`); required' },
    action: { type: 'string', value: 'MODULE.METHOD', description: 'the one action the credential permits (exact, no wildcard); required' },
    db: { type: 'string', value: 'FILE|URL', description: 'the database project-cli will use (TOOLGATE_DB, else toolgate.db in the data folder)' },
  },
  env: ['TOOLGATE_DB', 'TOOLGATE_HOME'],
  examples: [
    'toolgate dev-token --user alice > /dev/null     # only without dev data yet: serve --dev and npm start make it too',
    'export TOOLGATE_DB=/tmp/c.db',
    'PROJECT_CLI_CREDENTIAL=$(toolgate dev-credential --user alice --action calendar.read) project-cli calendar read --mode day --date 2026-04-21',
  ],
} satisfies CommandSpec;

export const AUTOMATION = {
  name: 'automation',
  summary: 'manage automation jobs (subcommand: add)',
  usage: ['automation add --owner USER_ID --skills a,b --allow m.x,m.y [--quota JSON] [--ask m.x,m.y] [--ask-ttl-s N] [--db FILE]'],
  description: 'Automation jobs let a trusted backend open sessions that act for the job\'s owner. See toolgate automation add --help.',
  flags: {},
  env: [],
  examples: ['toolgate automation add --help'],
} satisfies CommandSpec;

export const AUTOMATION_ADD = {
  name: 'automation add',
  summary: 'create an automation job and print {"job_id": …}',
  usage: ['automation add --owner USER_ID --skills a,b --allow m.x,m.y [--quota JSON] [--ask m.x] [--ask-ttl-s N] [--db FILE]'],
  description:
    'Creates a job that runs as USER_ID with exactly these skills and actions (wildcards such as calendar.* are ' +
    'expanded now, so the job never widens later). A session opened with {"type":"automation","job_id"} over stdio, ' +
    'or over WebSocket after an initialize carrying TOOLGATE_SERVICE_KEY, uses them.',
  flags: {
    owner: { type: 'string', value: 'USER_ID', description: 'the user the job acts for; required' },
    skills: { type: 'string', value: 'a,b', description: 'comma-separated skills the job\'s sessions see', default: 'none' },
    allow: { type: 'string', value: 'm.x,m.y', description: 'comma-separated actions (or module.*) the job may run; required' },
    quota: {
      type: 'string',
      value: 'JSON',
      description: 'per-user call quotas of the job\'s sessions, as agents.<profile>.quotas in the config: {"calendar.create":{"per_minute":5,"per_day":100}}',
      default: 'none',
    },
    ask: { type: 'string', value: 'm.x,m.y', description: 'comma-separated actions (or module.*) that wait for a person to approve the exact call', default: 'none' },
    'ask-ttl-s': { type: 'string', value: 'N', description: 'seconds a call waits for the approval (1-86400)', default: '600' },
    db: DB_FLAG,
  },
  env: ['TOOLGATE_DB', 'TOOLGATE_HOME'],
  examples: [
    'toolgate automation add --owner alice --skills calendar --allow calendar.read,calendar.create',
    'toolgate automation add --owner alice --skills calendar --allow calendar.read,calendar.create --quota \'{"calendar.create":{"per_hour":20}}\'',
    'toolgate automation add --owner alice --skills calendar --allow calendar.* --ask calendar.delete,calendar.share',
  ],
} satisfies CommandSpec;

export const DEMO = {
  name: 'demo',
  summary: 'run a scripted session against a fresh daemon and narrate it (what `npm start` does)',
  usage: ['demo [--db FILE]'],
  description:
    'Starts the real daemon (serve --stdio --dev) as a child, mints a dev token for alice as dev-token does, and ' +
    'plays a scripted host session, printing every request, response and notification a host sees. The token itself is never printed.',
  flags: {
    db: { type: 'string', value: 'FILE', description: 'database the demo writes to', default: '$TOOLGATE_DB, else toolgate.db in the data folder' },
  },
  env: ['TOOLGATE_BEARER_SECRET', 'TOOLGATE_DB', 'TOOLGATE_HOME', 'TOOLGATE_LOG_LEVEL'],
  examples: ['toolgate demo     # then the serve --ws command it prints last, to browse what it stored in the inspector'],
} satisfies CommandSpec;

export const CONFORMANCE = {
  name: 'conformance',
  summary: 'check any implementation of the toolgate protocol from the outside, over stdio or WebSocket',
  usage: [
    'conformance --stdio "CMD …" --token T [--token-b T2] [--secret S] [--agent NAME] [--ask-agent NAME] [--timeout-ms N]',
    'conformance --ws ws://HOST:PORT/rpc --token T [--token-b T2] [--secret S] [--agent NAME] [--ask-agent NAME] [--timeout-ms N]',
  ],
  description:
    'Speaks only the public protocol and validates every message it receives against the JSON Schemas in schemas/ ' +
    '(shipped with this package), so it checks any implementation, in any language: give --stdio the command that ' +
    'starts yours (it must speak LSP-framed JSON-RPC on stdin/stdout), or --ws the URL it listens on, and tokens ' +
    'it accepts. Each check names the section of docs/protocols/ it enforces (docs/protocols/conformance.md lists ' +
    'them all): the lifecycle, framing errors, sessions and bad tokens, agent profiles and skill narrowing, ' +
    'tool/invoke with its tool/result notifications before the response, replays and DUPLICATE_TOOL_CALL_ID, ' +
    'batches, which calls carry a ui_schema, every action read back after it writes, credentials refused, history ' +
    'paging, thread/list, skills, subscriptions, thread isolation between two users (--token-b), approval of asking calls (--ask-agent) and shutdown. ' +
    'Prints one line per check and "N passed, M failed" last; a check that cannot apply says why it is skipped. ' +
    'Exit 0 iff none failed, 1 otherwise. Each run uses fresh ids, so it can be repeated against the same ' +
    'database; the --stdio command inherits this environment.',
  flags: {
    stdio: { type: 'string', value: '"CMD …"', description: 'start CMD (split into argv, never run by a shell) and talk on its stdin/stdout' },
    ws: { type: 'string', value: 'URL', description: 'connect to a WebSocket endpoint, e.g. ws://127.0.0.1:8787/rpc' },
    token: { type: 'string', value: 'T', description: 'bearer token of user A (required); its agent profile must allow calendar.*, contacts.* and memory.*' },
    'token-b': { type: 'string', value: 'T2', description: 'bearer token of a second user, for thread isolation and sharing (skipped without)' },
    secret: {
      type: 'string',
      value: 'S',
      description: 'the HS256 bearer secret of the implementation: lets the runner mint tokens without exp, expired, or with a phone (those checks are skipped without)',
    },
    agent: { type: 'string', value: 'NAME', description: 'an agent profile allowing fewer actions, for the ACTION_NOT_ALLOWED check (skipped without)' },
    'ask-agent': {
      type: 'string',
      value: 'NAME',
      description: 'an agent profile whose approval.ask includes memory.forget (and allows memory.*), for the approval checks (skipped without)',
    },
    'timeout-ms': { type: 'string', value: 'N', description: 'how long to wait for any one response', default: '30000' },
  },
  env: ['TOOLGATE_BEARER_SECRET'],
  examples: [
    'T=$(toolgate dev-token --user alice); T2=$(toolgate dev-token --user bob)',
    'toolgate conformance --stdio "toolgate serve --stdio --dev --db /tmp/c.db" --token "$T" --token-b "$T2"',
    'toolgate conformance --ws ws://127.0.0.1:8787/rpc --token "$T"     # against: toolgate serve --ws --port 8787 --dev',
    'toolgate conformance --stdio "python3 -m mydaemon --stdio" --token "$T" --token-b "$T2" --secret "$MY_SECRET"     # your own implementation',
  ],
} satisfies CommandSpec;

/** Top-level commands, in the order `toolgate --help` lists them (subcommands are listed under their group). */
export const COMMANDS: readonly CommandSpec[] = [SERVE, DEV_TOKEN, DEV_CREDENTIAL, AUTOMATION_ADD, DEMO, CONFORMANCE];

/** Every spec that answers --help, for the help test. */
export const ALL_SPECS: readonly CommandSpec[] = [SERVE, DEV_TOKEN, DEV_CREDENTIAL, AUTOMATION, AUTOMATION_ADD, DEMO, CONFORMANCE];
