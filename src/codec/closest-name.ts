/** "Did you mean": the nearest of a set of known names (command-line flags, config keys). */

/**
 * The known name a mistyped one most likely meant, or undefined: within two
 * edits (`--prot` → `--port`), or an abbreviation of it with the same first
 * letter (`--websocket` → `--ws`), or a prefix either way
 * (`call_timeout` → `call_timeout_ms`). Flags and config keys alike.
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const isSubsequence = (short: string, long: string) => {
    let i = 0;
    for (const c of long) if (c === short[i]) i++;
    return i === short.length;
  };
  let best: { flag: string; score: number } | undefined;
  for (const flag of known) {
    const d = editDistance(name, flag);
    const score =
      d <= Math.min(2, Math.floor(flag.length / 2)) ? d
        : flag.length >= 2 && (name.startsWith(flag) || flag.startsWith(name) || (flag[0] === name[0] && isSubsequence(flag, name))) ? 3
          : Number.POSITIVE_INFINITY;
    if (score < (best?.score ?? Number.POSITIVE_INFINITY)) best = { flag, score };
  }
  return best?.flag;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}
