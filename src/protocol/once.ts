/**
 * A value built on first call and kept. The action table's schemas are
 * wrapped in it: a project-cli process runs one action, and building zod
 * schemas is most of what evaluating the table costs (bench/RESULTS.md,
 * start-up), so it builds only those of the action it runs.
 */
export function once<T>(build: () => T): () => T {
  let value: T | undefined;
  let done = false;
  return () => {
    if (!done) {
      value = build();
      done = true;
    }
    return value as T;
  };
}
