// o200k_base's 200,000 byte sequences and their ranks, compact: one pool of bytes, the offset of
// each rank's bytes in it, and an open-addressing hash table from bytes to rank, about 5 MB in all.
// gpt-tokenizer holds the same as an array of 200k strings and a Map built from it, about 46 MB of
// heap that, once built, stays in the process's RSS even when dropped. The table is read from
// o200k-ranks.bin, written from gpt-tokenizer's own ranks by generate-o200k-ranks.ts (a test fails
// when the two differ, so a new gpt-tokenizer cannot change counts unseen).
//
// File format: "O2K1", the number of ranks n (uint32 LE), n + 1 offsets (uint32 LE; rank r's bytes
// are pool[offset[r], offset[r + 1]), empty for an unused rank), then the pool.

const MAGIC = 'O2K1';

/** FNV-1a over bytes[from, to). */
function hashOf(bytes: Uint8Array, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash >>> 0;
}

export class RankTable {
  readonly #pool: Uint8Array;
  readonly #offsets: Uint32Array;
  /** Rank at each slot, -1 for an empty one; twice as many slots as ranks, a power of two. */
  readonly #slots: Int32Array;
  readonly #mask: number;

  private constructor(pool: Uint8Array, offsets: Uint32Array) {
    this.#pool = pool;
    this.#offsets = offsets;
    const ranks = offsets.length - 1;
    let size = 1;
    while (size < ranks * 2) size *= 2;
    this.#slots = new Int32Array(size).fill(-1);
    this.#mask = size - 1;
    for (let rank = 0; rank < ranks; rank++) {
      const from = offsets[rank]!;
      const to = offsets[rank + 1]!;
      if (from === to) continue;
      let slot = hashOf(pool, from, to) & this.#mask;
      while (this.#slots[slot] !== -1) slot = (slot + 1) & this.#mask;
      this.#slots[slot] = rank;
    }
  }

  /** The table of a file written by encodeRanks. */
  static read(file: Uint8Array): RankTable {
    const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
    if (new TextDecoder().decode(file.subarray(0, 4)) !== MAGIC) throw new Error('not an o200k rank table');
    const ranks = view.getUint32(4, true);
    const offsets = new Uint32Array(ranks + 1);
    for (let i = 0; i <= ranks; i++) offsets[i] = view.getUint32(8 + 4 * i, true);
    const poolStart = 8 + 4 * (ranks + 1);
    // A copy: the file's buffer is dropped, the pool kept.
    return new RankTable(file.slice(poolStart, poolStart + offsets[ranks]!), offsets);
  }

  /** The rank of bytes[from, to), or undefined when they are not a token. */
  rank(bytes: Uint8Array, from = 0, to = bytes.length): number | undefined {
    const length = to - from;
    let slot = hashOf(bytes, from, to) & this.#mask;
    for (;;) {
      const rank = this.#slots[slot]!;
      if (rank === -1) return undefined;
      const start = this.#offsets[rank]!;
      if (this.#offsets[rank + 1]! - start === length && this.#equal(start, bytes, from, length)) return rank;
      slot = (slot + 1) & this.#mask;
    }
  }

  #equal(start: number, bytes: Uint8Array, from: number, length: number): boolean {
    for (let i = 0; i < length; i++) if (this.#pool[start + i] !== bytes[from + i]) return false;
    return true;
  }
}

/** The file of `ranks` (gpt-tokenizer's: a string, or bytes that are not UTF-8, or a hole, per rank). */
export function encodeRanks(ranks: readonly (string | readonly number[] | undefined)[]): Uint8Array {
  const encoder = new TextEncoder();
  const pieces = ranks.map((value) =>
    typeof value === 'string' ? encoder.encode(value) : value === undefined ? new Uint8Array(0) : Uint8Array.from(value),
  );
  const poolBytes = pieces.reduce((sum, piece) => sum + piece.length, 0);
  const file = new Uint8Array(8 + 4 * (ranks.length + 1) + poolBytes);
  const view = new DataView(file.buffer);
  file.set(encoder.encode(MAGIC), 0);
  view.setUint32(4, ranks.length, true);
  let offset = 0;
  const poolStart = 8 + 4 * (ranks.length + 1);
  pieces.forEach((piece, rank) => {
    view.setUint32(8 + 4 * rank, offset, true);
    file.set(piece, poolStart + offset);
    offset += piece.length;
  });
  view.setUint32(8 + 4 * ranks.length, offset, true);
  return file;
}
