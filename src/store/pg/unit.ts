/**
 * One unit of work on PostgreSQL in as few round trips as its reads allow.
 * node-postgres sends one statement at a time and waits for its answer, so
 * every statement is a round trip; a call's unit used to be about twelve
 * (BEGIN, each read and write, savepoints, COMMIT). Here:
 *
 *  - Writes whose result the daemon already knows (ids and times chosen
 *    here; nothing but an outage or a conflict the unit treats as final can
 *    fail them) are HELD BACK (`hold`) and sent later as data-modifying CTEs
 *    of one statement, with the statement that needs them sent.
 *  - BEGIN is sent only when a statement must see or follow held writes
 *    before the unit ends. Until then reads run on their own (each is its
 *    own snapshot, as every statement of a READ COMMITTED transaction is).
 *  - The unit's last statement (`last`) carries every held write: when
 *    nothing began a transaction, that one statement IS the unit — atomic
 *    and durable on its own, no BEGIN, no COMMIT.
 *  - Savepoints are opened on the server only when a statement runs inside
 *    one after BEGIN; one whose writes were all held costs nothing, and a
 *    failing one just drops its held writes.
 *
 * A statement that is sent together with held writes, or ahead of them,
 * must not read what they write (the CTEs of one statement share its
 * snapshot): reads name their tables (`reads`), and a statement that names
 * none, or names a table a held write touches, first sends the held writes.
 * Foreign keys are checked at the end of the statement, so a held row
 * satisfies the key of a row in the same statement.
 *
 * A name may be narrowed to a part of its table, `table/part`: a write of
 * `users/blank` (a new user's id-only row) touches a read of `users`, but
 * not a read of `users/reached` (rows reached through a phone or an
 * invite, which a blank row that does not exist yet never is). Two names
 * touch when they are equal or one is the other's table.
 */

/** A statement's text (placeholders `$1…$n` of its own) and values. */
export interface Statement {
  text: string;
  values: readonly unknown[];
}

/** A write a unit may hold back: its statement and the tables it writes. */
export interface HeldWrite extends Statement {
  writes: readonly string[];
  /** An idempotent write: another one with the same key while it is held adds nothing. */
  once?: string;
  /**
   * The row an upsert writes: a second write of it cannot share a statement
   * with the first (an upsert may touch a row once per statement), so the
   * held writes are sent before it is held.
   */
  row?: string;
}

/**
 * Runs one parameterised statement on the unit's connection. `reads`: the
 * statement only reads, and only these tables; without it the statement
 * may read or write anything (it runs inside the transaction, after every
 * held write).
 */
export interface Query {
  <R = Record<string, unknown>>(text: string, values?: readonly unknown[], reads?: readonly string[]): Promise<R[]>;
  /** Holds a write back (absent outside a transaction: the repository runs it at once). */
  hold?: (write: HeldWrite) => Promise<void>;
  /**
   * The unit's last statement: nothing follows it in the unit (its work
   * returns right after). Absent outside a transaction.
   */
  last?: <R = Record<string, unknown>>(text: string, values: readonly unknown[], reads: readonly string[]) => Promise<R[]>;
}

/** How the unit reaches its connection: one statement, its errors already the store's. */
export type RunStatement = <R>(text: string, values: readonly unknown[]) => Promise<R[]>;

interface Pending {
  write: HeldWrite;
  /** The savepoint depth it was held at (0: the unit itself). */
  level: number;
}

/**
 * The text `combine` makes of some statements' texts: each write a CTE, its
 * placeholders moved past the ones before it. The texts are this store's
 * own constants, whose only `$` are placeholders — so a call sends the
 * same few combinations over and over, and each is worked out once
 * (`combinedText`).
 */
function combineText(writes: readonly Statement[], main: Statement | undefined): string {
  let offset = 0;
  const renumbered = (s: Statement) => {
    const at = offset;
    offset += s.values.length;
    return at === 0 ? s.text : s.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + at}`);
  };
  const ctes = writes.map((w, i) => `held_${i} AS (${renumbered(w)})`);
  if (!main) return `WITH ${ctes.join(',\n')}\nSELECT 1`;
  const text = renumbered(main);
  // The main statement's own CTEs join the list (a data-modifying WITH must be at the top level).
  const own = /^\s*WITH\s/i.exec(text);
  return own ? `WITH ${ctes.join(',\n')},\n${text.slice(own[0].length)}` : `WITH ${ctes.join(',\n')}\n${text}`;
}

/**
 * Combined texts by their parts' texts, a tree of maps keyed by each part's
 * text in order (a string's hash is kept on the string, so a lookup does
 * not re-read a constant text). Bounded: a store's texts are its own
 * constants, but a caller could in principle vary them.
 */
interface TextNode {
  next: Map<string, TextNode>;
  /** The part's number of values (its placeholders): the same text with another count is not looked up here. */
  arity: number;
  /** The combined text when these parts are all the writes and there is no main statement / with `main` as the last. */
  writesOnly?: string;
  withMain?: string;
}
const COMBINED_MAX = 256;
let combinedRoot: TextNode = { next: new Map(), arity: 0 };
let combinedCount = 0;

/** The node of `part` under `node`, made when missing; undefined when the text was kept with another arity. */
function childOf(node: TextNode, part: Statement): TextNode | undefined {
  let child = node.next.get(part.text);
  if (!child) node.next.set(part.text, (child = { next: new Map(), arity: part.values.length }));
  return child.arity === part.values.length ? child : undefined;
}

function combinedText(writes: readonly Statement[], main: Statement | undefined): string {
  let node: TextNode | undefined = combinedRoot;
  for (const w of writes) node = node && childOf(node, w);
  const mainNode = node && main ? childOf(node, main) : node;
  if (!node || !mainNode) return combineText(writes, main);
  const kept = main ? mainNode.withMain : node.writesOnly;
  if (kept !== undefined) return kept;
  const text = combineText(writes, main);
  if (++combinedCount > COMBINED_MAX) {
    combinedRoot = { next: new Map(), arity: 0 };
    combinedCount = 0;
  } else if (main) mainNode.withMain = text;
  else node.writesOnly = text;
  return text;
}

/**
 * One statement of the held writes and then `main` (or `SELECT 1`): each
 * write a CTE, its placeholders moved past the ones before it.
 */
export function combine(writes: readonly Statement[], main?: Statement): Statement {
  if (writes.length === 0 && main) return main;
  const values: unknown[] = [];
  for (const w of writes) for (const v of w.values) values.push(v);
  if (main) for (const v of main.values) values.push(v);
  return { text: combinedText(writes, main), values };
}

/** The table of a `table/part` name. */
function tableOf(name: string): string {
  const slash = name.indexOf('/');
  return slash < 0 ? name : name.slice(0, slash);
}

/** Whether a write of `w` may change what a read of `r` sees (`table/part` names: the unit's comment). */
export function touches(w: string, r: string): boolean {
  return w === r || tableOf(w) === r || w === tableOf(r);
}

export class PgUnit {
  private began = false;
  /** Savepoints the work is inside, and how many of them exist on the server. */
  private depth = 0;
  private opened = 0;
  private pending: Pending[] = [];
  /** Committed by its last statement: nothing more may run. */
  private done = false;

  /** `signal`: a cancelled call's unit stops before its next statement (and before COMMIT); what was sent rolls back. */
  constructor(
    private readonly run: RunStatement,
    private readonly signal?: AbortSignal,
  ) {}

  readonly query: Query = Object.assign(
    <R>(text: string, values: readonly unknown[] = [], reads?: readonly string[]) => this.statement<R>({ text, values }, reads),
    {
      hold: (write: HeldWrite) => this.hold(write),
      last: <R>(text: string, values: readonly unknown[], reads: readonly string[]) => this.last<R>({ text, values }, reads),
    },
  );

  private async hold(write: HeldWrite): Promise<void> {
    this.check();
    if (write.once !== undefined && this.pending.some((p) => p.write.once === write.once)) return;
    if (write.row !== undefined && this.pending.some((p) => p.write.row === write.row)) {
      await this.begin();
      await this.openSavepoints();
      await this.flush(() => true);
    }
    this.pending.push({ write, level: this.depth });
  }

  private async statement<R>(s: Statement, reads: readonly string[] | undefined): Promise<R[]> {
    this.check();
    if (reads && !this.touchesHeld(reads)) {
      if (!this.began) return this.run<R>(s.text, s.values);
      await this.openSavepoints();
      return this.run<R>(s.text, s.values);
    }
    await this.begin();
    await this.openSavepoints();
    await this.flush(() => true);
    return this.run<R>(s.text, s.values);
  }

  private async last<R>(s: Statement, reads: readonly string[]): Promise<R[]> {
    this.check();
    if (this.touchesHeld(reads)) return this.statement<R>(s, undefined);
    // Alone, it is the unit; inside a transaction, it still carries the held writes (all of its level by now).
    const alone = !this.began && this.depth === 0;
    if (!alone) {
      await this.begin();
      await this.openSavepoints();
    }
    const writes = this.pending.map((p) => p.write);
    this.pending = [];
    const combined = combine(writes, s);
    if (alone) this.done = true;
    return this.run<R>(combined.text, combined.values);
  }

  /** Runs `work` as a savepoint of the unit (`Tx.savepoint`). */
  async savepoint<T>(work: () => Promise<T>): Promise<T> {
    this.check();
    const level = ++this.depth;
    try {
      const value = await work();
      // Its held writes now belong to the enclosing level. An opened savepoint is left to COMMIT (RELEASE costs a round trip).
      for (const p of this.pending) if (p.level >= level) p.level = level - 1;
      return value;
    } catch (err) {
      this.pending = this.pending.filter((p) => p.level < level);
      if (this.opened >= level) {
        this.opened = level - 1;
        await this.run(`ROLLBACK TO SAVEPOINT sp_${level}`, []);
      }
      throw err;
    } finally {
      this.depth = level - 1;
      if (this.opened > this.depth) this.opened = this.depth;
    }
  }

  /** After the work returned: what is held, then COMMIT — or nothing, when a last statement committed or nothing was written. */
  async commit(): Promise<void> {
    if (this.done) return;
    this.signal?.throwIfAborted();
    if (!this.began) {
      const writes = this.pending.map((p) => p.write);
      this.pending = [];
      this.done = true;
      if (writes.length > 0) {
        const combined = combine(writes);
        await this.run(combined.text, combined.values);
      }
      return;
    }
    await this.flush(() => true);
    this.done = true;
    await this.run('COMMIT', []);
  }

  /** After the work threw: undoes what was sent (held writes were never sent). */
  async rollback(): Promise<void> {
    this.pending = [];
    if (this.began && !this.done) {
      this.done = true;
      await this.run('ROLLBACK', []);
    }
  }

  private check(): void {
    if (this.done) throw new Error('the unit of work has ended (its last statement committed it)');
    this.signal?.throwIfAborted();
  }

  private touchesHeld(tables: readonly string[]): boolean {
    return this.pending.some((p) => p.write.writes.some((w) => tables.some((r) => touches(w, r))));
  }

  private async begin(): Promise<void> {
    if (this.began) return;
    this.began = true;
    await this.run('BEGIN', []);
  }

  /** Opens the work's savepoints on the server, each after the held writes of the levels outside it. */
  private async openSavepoints(): Promise<void> {
    while (this.opened < this.depth) {
      const next = this.opened + 1;
      await this.flush((p) => p.level < next);
      await this.run(`SAVEPOINT sp_${next}`, []);
      this.opened = next;
    }
  }

  private async flush(which: (p: Pending) => boolean): Promise<void> {
    const sent = this.pending.filter(which);
    if (sent.length === 0) return;
    this.pending = this.pending.filter((p) => !which(p));
    const combined = combine(sent.map((p) => p.write));
    await this.run(combined.text, combined.values);
  }
}
