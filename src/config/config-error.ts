/** A mistake in the configuration, a key file or a path: `toolgate` prints its message as one line and exits 2. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
