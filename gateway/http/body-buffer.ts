// A body's bytes (a JSON body, an uploaded file), gathered as they arrive into one buffer of
// their own. Joining the pieces at the end (Buffer.concat) copied 25 MB in one turn of the event
// loop (70 ms of stall on this project's machines, page faults included); copying each piece as
// it comes spreads that over the upload. The buffer is sized from what the request declares (its
// Content-Length, at most the limit) and grows by doubling when that was short (a chunked
// upload). The bytes end in an ArrayBuffer of their own, so that a file can be transferred to a
// worker thread (audio-probe.ts) rather than copied.

/** Where a buffer without a declared length starts. */
const FIRST_BYTES = 256 * 1024;

export class BodyBuffer {
  #bytes: Buffer;
  #length = 0;
  readonly #most: number;

  /** `expected`: the bytes the request says it holds (NaN when it does not say); `most`: the limit. */
  constructor(expected: number, most: number) {
    this.#most = most;
    this.#bytes = Buffer.allocUnsafeSlow(Math.max(1, Math.min(most, Number.isFinite(expected) && expected > 0 ? expected : FIRST_BYTES)));
  }

  get length(): number {
    return this.#length;
  }

  append(chunk: Buffer): void {
    const needed = this.#length + chunk.length;
    if (needed > this.#bytes.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(needed, Math.min(this.#most, this.#bytes.length * 2)));
      this.#bytes.copy(grown, 0, 0, this.#length);
      this.#bytes = grown;
    }
    chunk.copy(this.#bytes, this.#length);
    this.#length = needed;
  }

  /**
   * The bytes: a view from the start of an ArrayBuffer that holds nothing else (it may be longer:
   * shrinking it would copy the bytes, 70 ms for 25 MB), which may therefore go to a worker whole.
   * The buffer is spent.
   */
  take(): Buffer {
    const bytes = this.#bytes.subarray(0, this.#length);
    this.#bytes = Buffer.alloc(0);
    return bytes;
  }

  /** Lets the bytes go (a refused upload). */
  clear(): void {
    this.#bytes = Buffer.alloc(0);
    this.#length = 0;
  }
}
