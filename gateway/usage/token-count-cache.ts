// Token counts of texts, remembered. A chat client sends the whole conversation on every turn,
// and an application the same system prompt on every request: without this the gateway counts
// the same messages again each time. Short texts are worth it too: counting (o200k) costs 2-7 µs
// for 16-512 characters and 11 µs for 1 KiB, the lookup of a freshly parsed copy 0.1-0.8 and 1.5
// µs (scratch measurement, one core of the bench machine), and most chat messages are short.
/** What an entry costs beyond its text, in characters of the bound: so tiny texts cannot pile up. */
const ENTRY_OVERHEAD = 32;

export class TokenCountCache {
  readonly #maxChars: number;
  /** Insertion order is recency: a hit moves its entry to the end, eviction takes the front. */
  readonly #counts = new Map<string, number>();
  #chars = 0;

  /**
   * `maxChars`: the most text kept, in UTF-16 code units, each entry charged ENTRY_OVERHEAD more
   * (memory is about twice that, in bytes, at most).
   */
  constructor(maxChars: number) {
    this.#maxChars = maxChars;
  }

  /** The count of `text`, from the cache when it was counted before; `count` otherwise. */
  count(text: string, count: (text: string) => number): number {
    const cost = text.length + ENTRY_OVERHEAD;
    if (cost > this.#maxChars) return count(text);
    const known = this.#counts.get(text);
    if (known !== undefined) {
      this.#counts.delete(text);
      this.#counts.set(text, known);
      return known;
    }
    const counted = count(text);
    this.#counts.set(text, counted);
    this.#chars += cost;
    for (const [oldest] of this.#counts) {
      if (this.#chars <= this.#maxChars) break;
      this.#counts.delete(oldest);
      this.#chars -= oldest.length + ENTRY_OVERHEAD;
    }
    return counted;
  }

  get size(): number {
    return this.#counts.size;
  }
}
