// Which prompt prefixes each engine replica was sent lately, for prefix-cache affinity
// (gateway/routing/prefix/): each replica's recent block hashes (a prompt's chain, see
// prompt-blocks.ts), kept to a bound per replica, least recently sent first out, and for a
// while. Shared by every gateway where Redis is (an engine's cache is filled by the whole fleet's
// requests), the process's own in memory.

export interface PrefixIndexLimits {
  /** Block hashes kept per replica: about what its KV cache holds, in blocks of prompt-blocks.ts. */
  readonly blocksPerReplica: number;
  /** How long a hash counts after it was last sent (ms): an engine evicts what is not reused. */
  readonly ttlMs: number;
}

/** About 512k tokens per replica (an 8B model's cache on one 80 GB GPU), for 10 minutes. */
export const DEFAULT_PREFIX_INDEX_LIMITS: PrefixIndexLimits = { blocksPerReplica: 8192, ttlMs: 600_000 };

export interface PrefixIndexStore {
  /**
   * For each of `replicas` (route keys), in order, how many leading hashes of `chain` it was
   * sent within the time limit: the blocks of this prompt it probably holds.
   */
  matches(replicas: readonly string[], chain: readonly string[], now: number): Promise<number[]>;
  /** `replica` was sent `chain` at `now`. Never awaited on a request's path by its callers. */
  record(replica: string, chain: readonly string[], now: number): Promise<void>;
}

/** How many leading entries of `chain` `has` says yes to. */
export function leadingMatches(chain: readonly string[], has: (hash: string, index: number) => boolean): number {
  let n = 0;
  while (n < chain.length && has(chain[n]!, n)) n++;
  return n;
}
