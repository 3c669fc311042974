// ESLint flat config: typescript-eslint's recommended (type-unaware) rules, plus the layering
// rule of the code base — no import points upward (the graph in README.md, "Where things are"):
//   src/app (the composition root: `toolgate`'s command line and `serve`) → src/mcp | src/http
//   (MCP; the HTTP routes), side by side → src/rpc (JSON-RPC: dispatcher, stdio, WebSocket) →
//   the runtime, top first: src/calls → src/threads → src/sessions → src/auth → src/config →
//   src/runtime → telemetry → cli-router → codec | store; src/protocol is the bottom
//   (it imports nothing of ours) and the conformance runner sees only src/protocol. Only the
//   transports turn errors into JSON-RPC errors: below src/rpc nothing imports ResponseError or
//   the JSON-RPC code table (the daemon throws DaemonErrors). src/inspector is not linted (a
//   browser bundle): test/unit/repo/layering.test.ts holds it to src/protocol and src/client.
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import { builtinRules } from 'eslint/use-at-your-own-risk';

/** ESLint's own recommended rules (what @eslint/js ships), read from the rules' metadata. */
const eslintRecommended = Object.fromEntries(
  [...builtinRules].filter(([, rule]) => rule.meta?.docs?.recommended).map(([name]) => [name, 'error']),
);

/** The runtime's folders, top first: each imports only those after it (and the layers below them all). */
const RUNTIME = ['calls', 'threads', 'sessions', 'auth', 'config', 'runtime'];
const WHAT = {
  calls: 'the call service and its executors',
  threads: 'threads (events, subscriptions, history)',
  sessions: 'sessions',
  auth: 'authentication and credentials',
  config: 'the configuration',
  runtime: 'the runtime basics',
};

/** `no-restricted-imports` with one message per forbidden layer (or `[regex, message, importNames]`). */
const forbid = (...layers) => [
  'error',
  {
    patterns: layers.map(([regex, message, importNames]) => (importNames ? { regex, message, importNames } : { regex, message })),
  },
];
const up = (dir, why) => [`^(\\.\\./)+${dir}/`, why];
/** Below src/rpc, no JSON-RPC errors: neither vscode-jsonrpc's ResponseError nor the wire's code table. */
const NO_WIRE_ERRORS = [
  ['^vscode-jsonrpc', 'only src/rpc builds JSON-RPC errors: throw a DaemonError (src/runtime/errors.ts)', ['ResponseError']],
  ['(^|/)protocol/(errors|index)\\.js$', 'only src/rpc knows JSON-RPC error codes: throw a DaemonError (src/runtime/errors.ts)', ['RpcErrorCode']],
];

export default defineConfig(
  { ignores: ['dist/**', 'node_modules/**', 'protocol/**', 'data/**', 'src/inspector/**'] },
  { rules: eslintRecommended },
  ...tseslint.configs.recommended,
  {
    rules: {
      // The code base uses `_`-prefixed names for deliberately unused bindings.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // Non-null assertions document invariants the compiler cannot see (checked indexes).
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Tests match aligned help columns with literal runs of spaces.
      'no-regex-spaces': 'off',
    },
  },
  {
    // Node scripts: the globals (process, console, URL…) are Node's; the compiler checks the TypeScript.
    files: ['**/*.mjs', '**/*.cjs', '**/*.js'],
    rules: { 'no-undef': 'off' },
  },
  {
    // Tests take apart untyped JSON from the wire.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['src/protocol/**/*.ts'],
    rules: { 'no-restricted-imports': forbid(['^\\.\\./', 'src/protocol is the bottom layer: it imports nothing of the code base']) },
  },
  {
    files: ['src/conformance/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid([
        '^\\.\\./(?!protocol/)',
        'the conformance runner speaks only the public protocol: import src/protocol, nothing else of the code base',
      ]),
    },
  },
  {
    files: ['src/client/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid([
        '^\\.\\./(?!protocol/)',
        'the client speaks only the public protocol: import src/protocol, nothing else of the code base (never the daemon)',
      ]),
    },
  },
  {
    // Example hosts are written as a host author would: on the client and the protocol, never the daemon.
    files: ['examples/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid([
        '^\\.\\./\\.\\./src/(?!client/|protocol/)',
        'an example host uses only toolgate/client and toolgate/protocol (src/client, src/protocol)',
      ]),
    },
  },
  {
    files: ['src/store/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(
        up('app', 'the store is below the composition root'),
        up('mcp', 'the store is below MCP'),
        up('http', 'the store is below the HTTP routes'),
        ...RUNTIME.map((d) => up(d, 'the store is below the daemon')),
        up('rpc', 'the store is below the rpc layer'),
        up('cli-router', 'the store is below the CLI router (handlers call the store)'),
        up('telemetry', 'the store is below telemetry: report through Store.onCommit'),
        up('conformance', 'the store never uses the conformance runner'),
        ...NO_WIRE_ERRORS,
      ),
    },
  },
  {
    files: ['src/codec/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(
        up('app', 'codec is pure: no composition root'),
        up('mcp', 'codec is pure: no MCP'),
        up('http', 'codec is pure: no HTTP routes'),
        ...RUNTIME.map((d) => up(d, 'codec is pure: no daemon')),
        up('rpc', 'codec is pure: no rpc'),
        up('store', 'codec is pure: no store (no I/O)'),
        up('cli-router', 'codec is below the CLI router (the router calls the codec)'),
        up('telemetry', 'codec is pure: no telemetry'),
        up('conformance', 'codec never uses the conformance runner'),
        ...NO_WIRE_ERRORS,
      ),
    },
  },
  {
    files: ['src/cli-router/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(
        up('app', 'the CLI router runs without the composition root'),
        up('mcp', 'the CLI router knows nothing of MCP'),
        up('http', 'the CLI router knows nothing of HTTP'),
        ...RUNTIME.map((d) => up(d, 'the CLI router runs without the daemon')),
        up('rpc', 'the CLI router knows nothing of JSON-RPC'),
        up('telemetry', 'project-cli loads no metrics or tracing (its start-up budget)'),
        up('conformance', 'the CLI router never uses the conformance runner'),
        ...NO_WIRE_ERRORS,
      ),
    },
  },
  {
    files: ['src/telemetry/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(
        up('app', 'telemetry is below the composition root (src/app wires it)'),
        up('mcp', 'telemetry is below the transports (they call its hook)'),
        up('http', 'telemetry is below the HTTP routes (src/http serves its metrics)'),
        up('rpc', 'telemetry is below the transports (they call its hook)'),
        ...RUNTIME.map((d) => up(d, 'telemetry is below the daemon: it sees the store and the action table, never the runtime')),
        up('conformance', 'telemetry never uses the conformance runner'),
        ...NO_WIRE_ERRORS,
      ),
    },
  },
  // The runtime, one block per folder: nothing above it in the runtime, no transport, no JSON-RPC error.
  ...RUNTIME.map((dir, at) => ({
    files: [`src/${dir}/**/*.ts`],
    rules: {
      'no-restricted-imports': forbid(
        up('app', 'the runtime is below the composition root (src/app)'),
        up('mcp', 'the runtime is below the transports: MCP calls it, never the reverse'),
        up('http', 'the runtime is below the transports: the HTTP routes call it, never the reverse'),
        up('rpc', 'the runtime is below the transports: throw domain errors, let src/rpc map them'),
        up('conformance', 'the runtime never uses the conformance runner'),
        ...RUNTIME.slice(0, at).map((above) => up(above, `src/${dir} is below ${WHAT[above]} (src/${above}): take what it needs as a parameter`)),
        ...NO_WIRE_ERRORS,
      ),
    },
  })),
  {
    files: ['src/rpc/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(
        up('app', 'the transports are below the composition root (src/app)'),
        up('mcp', 'src/rpc is JSON-RPC alone: MCP stands on it, not the reverse'),
        up('http', 'src/rpc is JSON-RPC alone: the HTTP routes stand on it, not the reverse'),
        up('conformance', 'the transports never use the conformance runner'),
      ),
    },
  },
  {
    files: ['src/mcp/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(
        up('app', 'MCP is below the composition root (src/app)'),
        up('http', 'MCP and the HTTP routes stand side by side: share through src/rpc or below'),
        up('conformance', 'the transports never use the conformance runner'),
      ),
    },
  },
  {
    files: ['src/http/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(
        up('app', 'the HTTP routes are below the composition root (src/app)'),
        up('mcp', 'the HTTP routes and MCP stand side by side: src/app mounts /mcp'),
        up('conformance', 'the transports never use the conformance runner'),
      ),
    },
  },
);
