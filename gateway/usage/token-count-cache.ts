// Token counts of long texts, remembered. A chat client sends the whole conversation on every
// turn, so without this the gateway counts the same history again each time: about 2 ms of its
// one thread per 100 KB (o200k, measured). Texts under MIN_CHARS are not kept: counting them
// costs about as much as the lookup, and they would crowd the cache out.
const MIN_CHARS = 1024;

export class TokenCountCache {
  readonly #maxChars: number;
  /** Insertion order is recency: a hit moves its entry to the end, eviction takes the front. */
  readonly #counts = new Map<string, number>();
  #chars = 0;

  /** `maxChars`: the most text kept, in UTF-16 code units (memory is about twice that, in bytes, at most). */
  constructor(maxChars: number) {
    this.#maxChars = maxChars;
  }

  /** The count of `text`, from the cache when it was counted before; `count` otherwise. */
  count(text: string, count: (text: string) => number): number {
    if (text.length < MIN_CHARS || text.length > this.#maxChars) return count(text);
    const known = this.#counts.get(text);
    if (known !== undefined) {
      this.#counts.delete(text);
      this.#counts.set(text, known);
      return known;
    }
    const counted = count(text);
    this.#counts.set(text, counted);
    this.#chars += text.length;
    for (const [oldest] of this.#counts) {
      if (this.#chars <= this.#maxChars) break;
      this.#counts.delete(oldest);
      this.#chars -= oldest.length;
    }
    return counted;
  }

  get size(): number {
    return this.#counts.size;
  }
}
