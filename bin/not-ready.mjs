// What the launcher (bin/toolgate.mjs) says when this checkout cannot run yet. Imported only then: a start
// that finds its modules never loads it.

/**
 * Whether a "cannot find" error names a package (the dependencies are not installed, or are broken) or a
 * file of ours (the checkout is not built). Node quotes what it could not resolve: a package by its bare
 * name, a file by its path — relative, POSIX-absolute, a Windows drive or UNC path (a file: URL is taken as a
 * path too, though no Node from 20 to 26 quotes one) — and a package's missing file by a path through
 * node_modules. A package whose "exports" lack what is imported (mismatchedPackage) is the dependencies' too.
 */
export function missingPackage(message) {
  if (mismatchedPackage(message)) return true;
  const quoted = /Cannot find (?:package|module) '([^']*)'/.exec(String(message))?.[1];
  if (quoted === undefined) return false;
  if (/(?:^|[\\/])node_modules[\\/]/.test(quoted)) return true;
  return !/^(?:\.{1,2}(?:[\\/]|$)|[\\/]|[A-Za-z]:|file:)/.test(quoted);
}

/**
 * Whether an installed package does not match what the code asks for: its "exports" lack the subpath, or the
 * package's main entry, that is imported (node_modules older, or newer, than the checkout).
 */
function mismatchedPackage(message) {
  return /^(?:Package subpath '[^']*' is not defined by "exports"|No "exports" main defined) in /.test(String(message));
}

/** The one line for a checkout that cannot run yet, naming what to run where. */
export function notReadyLine(message, root) {
  const [what, fix] = mismatchedPackage(message)
    ? ['its installed dependencies do not match it', 'npm ci']
    : missingPackage(message)
      ? ['its dependencies are not installed', 'npm ci']
      : ['it is not built (no dist/)', 'npm ci && npm run build'];
  return `toolgate: this checkout cannot run yet, ${what}: run ${fix} in ${root}\n`;
}
