// Byte-pair merging in O(n log n). gpt-tokenizer merges a pre-tokenizer chunk by scanning all its
// pairs for the lowest rank after every merge, O(n²) in the chunk's bytes: a run of 100,000 letters
// without a space took 4 s (issue 13). This gives the same result (the lowest rank first, the
// leftmost of equal ranks first) with a heap, so the work is a few rank lookups per byte.

/** The rank of a byte sequence, undefined when no token is that sequence. */
export type RankOf = (bytes: Uint8Array) => number | undefined;

/** 2^32: a heap key is rank * SHIFT + position, so keys order by rank, then position. */
const SHIFT = 4_294_967_296;

/**
 * Merges `piece` as BPE does and returns where each resulting token starts (its end is the next
 * start, or the piece's end).
 */
export function bpeMergeStarts(piece: Uint8Array, rankOf: RankOf): number[] {
  const n = piece.length;
  // Parts as a linked list over byte positions: the part at p spans p..next[p].
  const next = new Int32Array(n + 1);
  const prev = new Int32Array(n + 1);
  const alive = new Uint8Array(n + 1).fill(1);
  /** The rank of merging the part at p with the one after it (Infinity: no such token). */
  const rank = new Float64Array(n + 1).fill(Infinity);
  for (let i = 0; i <= n; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
  }
  const heap = new KeyHeap();
  const rerank = (p: number) => {
    const q = next[p]!;
    const r = q >= n ? Infinity : (rankOf(piece.subarray(p, next[q])) ?? Infinity);
    rank[p] = r;
    if (r !== Infinity) heap.push(r * SHIFT + p);
  };
  for (let p = 0; p < n - 1; p++) rerank(p);
  while (heap.size > 0) {
    const key = heap.pop();
    const p = key % SHIFT;
    // Entries are never removed, only outdated: skip those no longer true of the parts.
    if (alive[p] === 0 || rank[p] !== (key - p) / SHIFT) continue;
    const q = next[p]!;
    alive[q] = 0;
    next[p] = next[q]!;
    if (next[p]! <= n) prev[next[p]!] = p;
    rerank(p);
    if (prev[p]! >= 0) rerank(prev[p]!);
  }
  const starts: number[] = [];
  for (let p = 0; p < n; p = next[p]!) starts.push(p);
  return starts;
}

/** A binary min-heap of numbers. */
class KeyHeap {
  readonly #keys: number[] = [];

  get size(): number {
    return this.#keys.length;
  }

  push(key: number): void {
    const keys = this.#keys;
    let i = keys.length;
    keys.push(key);
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (keys[up]! <= key) break;
      keys[i] = keys[up]!;
      i = up;
    }
    keys[i] = key;
  }

  pop(): number {
    const keys = this.#keys;
    const top = keys[0]!;
    const last = keys.pop()!;
    const size = keys.length;
    if (size === 0) return top;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      if (child + 1 < size && keys[child + 1]! < keys[child]!) child++;
      if (keys[child]! >= last) break;
      keys[i] = keys[child]!;
      i = child;
    }
    keys[i] = last;
    return top;
  }
}
