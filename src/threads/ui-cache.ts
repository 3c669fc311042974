/**
 * What the `ui` view of history adds to a stored message — a tool message's
 * compiled `ui_schema`, an assistant message's `worker_output` — computed
 * once per message and kept here, so `history/get` neither re-parses the
 * metadata nor recompiles the hints of a message it has served before.
 *
 * Entries are keyed by the compiler version too: a daemon whose compiler
 * changes never serves a schema compiled by another. The live path seeds the
 * cache with the very `ui_schema` its notification carried, so history
 * returns exactly that. Values are shared, never mutated. Bounded (LRU).
 */
import { UI_COMPILER_VERSION } from './ui.js';

export interface UiExtras {
  ui_schema?: unknown;
  worker_output?: unknown;
}

export class UiCache {
  private readonly entries = new Map<string, UiExtras>();
  constructor(private readonly max = 4096) {}

  get(messageId: string): UiExtras | undefined {
    const key = `${UI_COMPILER_VERSION}:${messageId}`;
    const hit = this.entries.get(key);
    if (hit) {
      // Refresh its place: least recently used goes first.
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(messageId: string, extras: UiExtras): void {
    const key = `${UI_COMPILER_VERSION}:${messageId}`;
    this.entries.delete(key);
    this.entries.set(key, extras);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}
