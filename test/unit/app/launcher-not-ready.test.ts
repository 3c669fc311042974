/**
 * The launcher's line for a checkout that cannot run yet (bin/not-ready.mjs): a package Node cannot find
 * means `npm ci`; a file of ours it cannot find means the checkout is not built — whatever the platform
 * writes the file's path as. The Linux messages are also checked from outside (e2e/first-hour); the
 * Windows forms only here, since this machine's Node never writes them (nor does any Node quote a file:
 * URL; it is handled as a path all the same).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../../helpers/repo.js';

const { missingPackage, notReadyLine } = (await import(pathToFileURL(join(REPO_ROOT, 'bin', 'not-ready.mjs')).href)) as {
  missingPackage(message: string): boolean;
  notReadyLine(message: string, root: string, code?: string): string;
};

test('a bare package name is a missing dependency: npm ci', () => {
  for (const message of [
    "Cannot find package 'zod' imported from /srv/toolgate/dist/src/app/cli.js",
    "Cannot find package '@modelcontextprotocol/server' imported from C:\\toolgate\\dist\\daemon\\toolgate.cjs",
    "Cannot find module 'better-sqlite3'\nRequire stack:\n- /srv/toolgate/dist/daemon/toolgate.cjs",
    // A package installed without its files (a broken or partial node_modules): quoted by its path.
    "Cannot find package '/srv/toolgate/node_modules/zod/index.js' imported from /srv/toolgate/dist/daemon/toolgate.cjs",
    "Cannot find module 'C:\\toolgate\\node_modules\\ws\\index.js'. Please verify that the package.json has a valid \"main\" entry",
  ]) {
    assert.equal(missingPackage(message), true, message);
    assert.match(notReadyLine(message, '/srv/toolgate/'), /^toolgate: this checkout cannot run yet, its dependencies are not installed: run npm ci in \/srv\/toolgate\/\n$/);
  }
});

test('a path of ours, in any platform form, is a checkout not built: npm ci && npm run build', () => {
  for (const message of [
    "Cannot find module '/srv/toolgate/dist/daemon/start-up-heap.js' imported from /srv/toolgate/bin/toolgate.mjs",
    "Cannot find module './dist/src/app/cli.js'",
    "Cannot find module '../dist/src/app/cli.js'",
    "Cannot find module '..'",
    "Cannot find module 'C:\\Users\\ana\\toolgate\\dist\\daemon\\start-up-heap.js' imported from C:\\Users\\ana\\toolgate\\bin\\toolgate.mjs",
    "Cannot find module 'd:/toolgate/dist/src/app/cli.js'",
    "Cannot find module '\\\\server\\share\\toolgate\\dist\\src\\app\\cli.js'",
    "Cannot find module 'file:///C:/toolgate/dist/src/app/cli.js'",
  ]) {
    assert.equal(missingPackage(message), false, message);
    assert.match(notReadyLine(message, 'C:\\toolgate\\'), /^toolgate: this checkout cannot run yet, it is not built \(no dist\/\): run npm ci && npm run build in C:\\toolgate\\\n$/);
  }
});

test('an installed package whose "exports" lack what is imported (node_modules not matching the checkout): npm ci, naming it', () => {
  for (const [message, name] of [
    ['Package subpath \'./ext/skills\' is not defined by "exports" in /srv/toolgate/node_modules/@modelcontextprotocol/server/package.json imported from /srv/toolgate/dist/src/mcp/mcp-skills.js', '@modelcontextprotocol/server'],
    // Chosen by the error's code, not its wording: a quote in the subpath changes nothing.
    ['Package subpath \'./it\'s\' is not defined by "exports" in /srv/toolgate/node_modules/zod/package.json', 'zod'],
    ['No "exports" main defined in C:\\toolgate\\node_modules\\better-sqlite3\\package.json', 'better-sqlite3'],
  ] as const) {
    assert.equal(
      notReadyLine(message, '/srv/toolgate/', 'ERR_PACKAGE_PATH_NOT_EXPORTED'),
      `toolgate: this checkout cannot run yet, its installed dependencies do not match it (${name}): run npm ci in /srv/toolgate/\n`,
      message,
    );
  }
});

test('a message that quotes nothing is taken as a checkout not built', () => {
  assert.equal(missingPackage('something else went missing'), false);
});
