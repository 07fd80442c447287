// Token counts of texts, remembered. A chat client sends the whole conversation on every turn,
// and an application the same system prompt on every request: without this the gateway counts
// the same messages again each time. Short texts are worth it too: counting (o200k) costs 2-7 µs
// for 16-512 characters and 11 µs for 1 KiB, the lookup of a freshly parsed copy 0.1-0.8 and 1.5
// µs (scratch measurement, one core of the bench machine), and most chat messages are short.
//
// Recency is a doubly linked list beside the Map, so that a hit and an eviction each cost the same
// whatever the cache holds. (Keeping recency as the Map's insertion order, deleting from its front,
// was not: V8 leaves deleted slots in place until it rehashes and walks them on every iteration
// from the front, so eviction got slower as tiny entries came and went: 23.6 s for an embeddings
// call of 200,000 new tiny inputs, issue 13.)
/** What an entry costs beyond its text, in characters of the bound: so tiny texts cannot pile up. */
const ENTRY_OVERHEAD = 32;

interface Entry {
  readonly text: string;
  readonly tokens: number;
  older: Entry | undefined;
  newer: Entry | undefined;
}

export class TokenCountCache {
  readonly #maxChars: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, Entry>();
  #oldest: Entry | undefined;
  #newest: Entry | undefined;
  #chars = 0;

  /**
   * `maxChars`: the most text kept, in UTF-16 code units, each entry charged ENTRY_OVERHEAD more
   * (memory is about twice that, in bytes, at most); `maxEntries`: the most texts kept.
   */
  constructor(maxChars: number, maxEntries = Math.floor(maxChars / ENTRY_OVERHEAD)) {
    this.#maxChars = maxChars;
    this.#maxEntries = maxEntries;
  }

  /** The remembered count of `text`, which becomes the most recently used; undefined if none. */
  get(text: string): number | undefined {
    const entry = this.#entries.get(text);
    if (entry === undefined) return undefined;
    if (entry !== this.#newest) {
      this.#unlink(entry);
      this.#append(entry);
    }
    return entry.tokens;
  }

  /** Remembers the count of `text` (not already remembered), forgetting the least recently used past the bounds. */
  set(text: string, tokens: number): void {
    const cost = text.length + ENTRY_OVERHEAD;
    if (cost > this.#maxChars || this.#maxEntries === 0 || this.#entries.has(text)) return;
    const entry: Entry = { text, tokens, older: undefined, newer: undefined };
    this.#entries.set(text, entry);
    this.#append(entry);
    this.#chars += cost;
    while (this.#chars > this.#maxChars || this.#entries.size > this.#maxEntries) {
      const oldest = this.#oldest!;
      this.#unlink(oldest);
      this.#entries.delete(oldest.text);
      this.#chars -= oldest.text.length + ENTRY_OVERHEAD;
    }
  }

  /** The count of `text`, from the cache when it was counted before; `count` otherwise (and remembered). */
  count(text: string, count: (text: string) => number): number {
    const known = this.get(text);
    if (known !== undefined) return known;
    const counted = count(text);
    this.set(text, counted);
    return counted;
  }

  get size(): number {
    return this.#entries.size;
  }

  #append(entry: Entry): void {
    entry.older = this.#newest;
    entry.newer = undefined;
    if (this.#newest) this.#newest.newer = entry;
    else this.#oldest = entry;
    this.#newest = entry;
  }

  #unlink(entry: Entry): void {
    if (entry.older) entry.older.newer = entry.newer;
    else this.#oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else this.#newest = entry.older;
    entry.older = entry.newer = undefined;
  }
}
