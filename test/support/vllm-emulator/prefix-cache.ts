// The emulated GPU's KV-cache blocks and its automatic prefix cache, as vLLM's block pool keeps
// them: a prompt's full blocks are named by a hash chain (each block's hash covers its parent's
// hash and its own tokens, so equal hashes mean equal prefixes); a finished request's named blocks
// stay cached, free to reuse, until a new allocation needs the room and evicts the least
// recently freed first. Only counts and names are kept: no block holds data.
import { createHash } from 'node:crypto';

/** The hash of each full block of `tokens`, chained from the first block (a partial last block has none). */
export function blockHashes(tokens: ArrayLike<number>, blockSize: number): string[] {
  const hashes: string[] = [];
  let parent = '';
  const block = new Uint32Array(blockSize);
  for (let start = 0; start + blockSize <= tokens.length; start += blockSize) {
    for (let i = 0; i < blockSize; i++) block[i] = tokens[start + i]!;
    parent = createHash('sha256').update(parent).update(block).digest('base64');
    hashes.push(parent);
  }
  return hashes;
}

/** The blocks one request holds: named ones shared through the cache, and unnamed ones of its own. */
export interface BlockLease {
  /** Named blocks this request holds a reference on (its cache hits, then the prompt blocks it registered). */
  readonly named: string[];
  /** Blocks held without a name (the rest of its prompt and room for its completion). */
  unnamed: number;
  released: boolean;
}

export class BlockPool {
  readonly #total: number;
  /** References held on each named block; a name with 0 is cached and free. */
  readonly #references = new Map<string, number>();
  /** The named blocks nobody holds, least recently freed first: the eviction order. */
  readonly #evictable = new Map<string, true>();
  #unnamedHeld = 0;
  #namedHeld = 0;

  constructor(totalBlocks: number) {
    this.#total = totalBlocks;
  }

  /** How many of `hashes`, from the first, are cached (held by others or free): the prefix hit, in blocks. */
  cachedPrefix(hashes: readonly string[]): number {
    let hit = 0;
    while (hit < hashes.length && this.#references.has(hashes[hit]!)) hit++;
    return hit;
  }

  /** Whether `fresh` blocks can be had while the `hits` (cached names) are held too. */
  canLease(hits: readonly string[], fresh: number): boolean {
    const hitsEvictable = hits.filter((hash) => this.#evictable.has(hash)).length;
    return fresh <= this.#empty() + this.#evictable.size - hitsEvictable;
  }

  /** Holds the `hits` and takes `fresh` unnamed blocks, evicting the least recently freed cached ones as needed. */
  lease(hits: readonly string[], fresh: number): BlockLease {
    if (!this.canLease(hits, fresh)) throw new Error(`no room for ${fresh} blocks`);
    for (const hash of hits) this.#hold(hash);
    for (let short = fresh - this.#empty(); short > 0; short--) this.#evictOldest();
    this.#unnamedHeld += fresh;
    return { named: [...hits], unnamed: fresh, released: false };
  }

  /**
   * Names the lease's prompt blocks once their prefill is done (vLLM caches a block when it is
   * computed): each of `hashes` not cached yet turns one unnamed block into that named block.
   * A name another request registered meanwhile stays theirs; this request's copy stays unnamed.
   */
  register(lease: BlockLease, hashes: readonly string[]): void {
    if (lease.released) return;
    for (const hash of hashes) {
      if (lease.unnamed === 0) return;
      if (this.#references.has(hash)) continue;
      this.#references.set(hash, 1);
      lease.named.push(hash);
      lease.unnamed--;
      this.#unnamedHeld--;
      this.#namedHeld++;
    }
  }

  /** Gives the blocks back: unnamed ones become empty, named ones stay cached (the tail of the prompt first in line for eviction). */
  release(lease: BlockLease): void {
    if (lease.released) return;
    lease.released = true;
    this.#unnamedHeld -= lease.unnamed;
    for (let i = lease.named.length - 1; i >= 0; i--) {
      const hash = lease.named[i]!;
      const left = this.#references.get(hash)! - 1;
      this.#references.set(hash, left);
      if (left === 0) {
        this.#namedHeld--;
        this.#evictable.set(hash, true);
      }
    }
  }

  /** Blocks held by requests (vLLM's KV-cache usage counts these, not the cached free ones). */
  get heldBlocks(): number {
    return this.#unnamedHeld + this.#namedHeld;
  }

  /** Named blocks cached (held or free). */
  get cachedBlocks(): number {
    return this.#references.size;
  }

  get totalBlocks(): number {
    return this.#total;
  }

  #empty(): number {
    return this.#total - this.#unnamedHeld - this.#references.size;
  }

  #hold(hash: string): void {
    const references = this.#references.get(hash)!;
    if (references === 0) {
      this.#evictable.delete(hash);
      this.#namedHeld++;
    }
    this.#references.set(hash, references + 1);
  }

  #evictOldest(): void {
    const oldest = this.#evictable.keys().next().value!;
    this.#evictable.delete(oldest);
    this.#references.delete(oldest);
  }
}
