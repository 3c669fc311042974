/**
 * The walk a migration makes over the rows the wire is rebuilt from (tool
 * and text messages, call records): every row is checked with the daemon's
 * `StoredRowCheck` (src/store/stored-rows.ts, the protocol's schemas), and a
 * migration that finds rows the protocol does not allow is refused — the
 * database stays at its version, and the error names the rows. Engines call
 * this inside their migration transaction. Schema-free on purpose: the
 * check is handed in, so project-cli (which never migrates a database
 * `serve` has not opened) loads no wire schema.
 */
export interface StoredRowCheck {
  /** Problems of one message row; [] when it is fine. */
  message(row: { role: string; metadata: string; tool_call_id: string | null; status: string | null }): string[];
  /** Problems of one `tool_calls` row; [] when it is fine. */
  toolCall(row: { args: string; outcome: string }): string[];
}

/** Rows named in the error; the count covers them all. */
const NAMED = 10;

export class RowReport {
  private readonly named: string[] = [];
  private bad = 0;

  add(where: string, problems: string[]): void {
    if (problems.length === 0) return;
    this.bad += 1;
    if (this.named.length < NAMED) this.named.push(`${where}: ${problems.join('; ')}`);
  }

  /** Throws, naming the rows, when any did not validate. */
  refuseIfAny(from: number, to: number): void {
    if (this.bad === 0) return;
    const more = this.bad > this.named.length ? `\n  … and ${this.bad - this.named.length} more` : '';
    throw new Error(
      `migrating the schema from version ${from} to ${to} refused: ${this.bad} stored row(s) do not match the protocol ` +
        `(the database is left at version ${from}; repair or remove them, then start again):\n  ${this.named.join('\n  ')}${more}`,
    );
  }
}
