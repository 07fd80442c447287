// The prefix index of one process (core/store/prefix-index.ts): per replica, its block hashes in
// the order they were last sent (a Map keeps insertion order: a hash sent again is moved to the
// end), the oldest dropped past the bound.
import { DEFAULT_PREFIX_INDEX_LIMITS, leadingMatches, type PrefixIndexLimits, type PrefixIndexStore } from '../prefix-index.ts';

export class MemoryPrefixIndex implements PrefixIndexStore {
  readonly #limits: PrefixIndexLimits;
  /** replica -> hash -> when it was last sent (ms) */
  readonly #replicas = new Map<string, Map<string, number>>();

  constructor(limits: PrefixIndexLimits = DEFAULT_PREFIX_INDEX_LIMITS) {
    this.#limits = limits;
  }

  async matches(replicas: readonly string[], chain: readonly string[], now: number): Promise<number[]> {
    const since = now - this.#limits.ttlMs;
    return replicas.map((replica) => {
      const sent = this.#replicas.get(replica);
      return sent === undefined ? 0 : leadingMatches(chain, (hash) => (sent.get(hash) ?? -Infinity) > since);
    });
  }

  async record(replica: string, chain: readonly string[], now: number): Promise<void> {
    let sent = this.#replicas.get(replica);
    if (sent === undefined) {
      sent = new Map();
      this.#replicas.set(replica, sent);
    }
    for (const hash of chain) {
      sent.delete(hash);
      sent.set(hash, now);
    }
    for (const hash of sent.keys()) {
      if (sent.size <= this.#limits.blocksPerReplica) break;
      sent.delete(hash);
    }
  }
}
