// What the launcher (bin/toolgate.mjs) says when this checkout cannot run yet. Imported only then: a start
// that finds its modules never loads it.

/**
 * Whether a "cannot find" error names a package (the dependencies are not installed, or are broken) or a
 * file of ours (the checkout is not built). Node quotes what it could not resolve: a package by its bare
 * name, a file by its path — relative, POSIX-absolute, a Windows drive or UNC path (a file: URL is taken as a
 * path too, though no Node from 20 to 26 quotes one) — and a package's missing file by a path through
 * node_modules.
 */
export function missingPackage(message) {
  const quoted = /Cannot find (?:package|module) '([^']*)'/.exec(String(message))?.[1];
  if (quoted === undefined) return false;
  if (/(?:^|[\\/])node_modules[\\/]/.test(quoted)) return true;
  return !/^(?:\.{1,2}(?:[\\/]|$)|[\\/]|[A-Za-z]:|file:)/.test(quoted);
}

/** The installed package an ERR_PACKAGE_PATH_NOT_EXPORTED message names (its package.json's folder), if any. */
function packageOf(message) {
  return /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/]package\.json/.exec(String(message))?.[1]?.replace('\\', '/');
}

/**
 * The one line for a checkout that cannot run yet, naming what to run where. `code` is the error's:
 * ERR_PACKAGE_PATH_NOT_EXPORTED is a package installed whose "exports" lack what the code imports.
 */
export function notReadyLine(message, root, code) {
  let what;
  let fix = 'npm ci';
  if (code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') {
    const name = packageOf(message);
    what = `its installed dependencies do not match it${name ? ` (${name})` : ''}`;
  } else if (missingPackage(message)) {
    what = 'its dependencies are not installed';
  } else {
    what = 'it is not built (no dist/)';
    fix = 'npm ci && npm run build';
  }
  return `toolgate: this checkout cannot run yet, ${what}: run ${fix} in ${root}\n`;
}
