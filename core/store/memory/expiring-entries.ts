// Entries that each end at a time, swept oldest first. A Map iterates in insertion order, and all
// the entries of one kind live the same time (a sign-in ten minutes, a session its hours), so the
// oldest ends first and a sweep stops at the first live entry: each entry is looked at once when
// it has ended, plus one live one per sweep (O(1) amortized), however many are live. An entry
// given a shorter time than one before it is swept late, but never read past its end.

interface Entry<T> {
  readonly value: T;
  readonly until: number;
}

export class ExpiringEntries<T> {
  readonly #entries = new Map<string, Entry<T>>();
  /** Told of each entry that leaves (taken, deleted or ended), for counts kept beside. */
  readonly #onRemove: (value: T) => void;
  #visited = 0;

  constructor(onRemove: (value: T) => void = () => {}) {
    this.#onRemove = onRemove;
  }

  /** Entries held, ended ones not yet swept included. */
  get size(): number {
    return this.#entries.size;
  }

  /** Entries the sweeps have looked at, in all (tests read it: it grows with the ended, not the live). */
  get visited(): number {
    return this.#visited;
  }

  /** Drops the entries ended at `now`, from the oldest, stopping at the first live one. */
  sweep(now: number): void {
    for (const [key, entry] of this.#entries) {
      this.#visited++;
      if (entry.until > now) return;
      this.#remove(key, entry);
    }
  }

  /** Keeps `value` under `key` until `until`, as the newest entry. */
  set(key: string, value: T, until: number): void {
    this.delete(key);
    this.#entries.set(key, { value, until });
  }

  /** The value of `key`, while it lasts. */
  get(key: string, now: number): T | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until > now) return entry.value;
    this.#remove(key, entry);
    return undefined;
  }

  /** The value of `key` while it lasts, removed either way. */
  take(key: string, now: number): T | undefined {
    const value = this.get(key, now);
    this.delete(key);
    return value;
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry !== undefined) this.#remove(key, entry);
  }

  #remove(key: string, entry: Entry<T>): void {
    this.#entries.delete(key);
    this.#onRemove(entry.value);
  }
}
