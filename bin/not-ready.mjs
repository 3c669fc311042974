// What the launcher (bin/toolgate.mjs) says when this checkout cannot run yet. Imported only then: a start
// that finds its modules never loads it.

/**
 * Whether a "cannot find" error names a package (the dependencies are not installed) or a file of ours (the
 * checkout is not built). Node quotes the specifier it could not resolve: a package by its bare name, a file
 * by its path, which may be relative, POSIX-absolute, a Windows drive or UNC path, or a file: URL.
 */
export function missingPackage(message) {
  const quoted = /Cannot find (?:package|module) '([^']*)'/.exec(String(message))?.[1];
  return quoted !== undefined && !/^(?:\.{0,2}[\\/]|[A-Za-z]:|file:)/.test(quoted);
}

/** The one line for a checkout that cannot run yet, naming what to run where. */
export function notReadyLine(message, root) {
  const [what, fix] = missingPackage(message) ? ['its dependencies are not installed', 'npm ci'] : ['it is not built (no dist/)', 'npm ci && npm run build'];
  return `toolgate: this checkout cannot run yet, ${what}: run ${fix} in ${root}\n`;
}
