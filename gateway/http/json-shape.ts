// A JSON body's shape, counted as its bytes arrive and before anything parses it: how many values
// it holds, how deep it nests, how many keys one object has. JSON.parse and the schemas run on the
// event loop, and their time grows with the number of values, not the bytes: 4.8 MB of `[1],`
// (1.2 million arrays) froze a gateway for 2.9 s before its caller was even found to have no
// budget. Counting each chunk as it arrives spreads the count over the upload and stops it at
// the first value past a bound, so a body past the bounds is never parsed at all.
//
// The count is of structure, not of text: a string is skipped with Buffer.indexOf (memchr), so a
// long prompt costs next to nothing, and only the bytes between strings are looked at one by one.
//
// On the way it notes whether any key could be `__proto__` or `constructor` (spelt plainly, or
// with escapes): only then does the body need secure-json-parse's search for them, whose
// regular expressions otherwise read every byte of every body (50 ms for a 10 MB prompt).
import type { ShapeViolation } from '../api/body-faults.ts';

export type { ShapeViolation };

/** The bounds of a body's shape (docs/configuration.md#limits). */
export interface JsonShapeLimits {
  /** Values in the whole body: each array element, object member and container counts one. */
  readonly values: number;
  /** Arrays and objects inside one another. */
  readonly depth: number;
  /** Members of one object. */
  readonly keys: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
/** Bytes of a string looked at one by one before the rest is searched with indexOf. */
const SHORT_STRING = 48;

export class JsonShape {
  readonly #limits: JsonShapeLimits;
  /**
   * Members counted in each open object (by depth); arrays keep 0 there. A plain array grown as
   * the body nests: a typed array of the depth bound, made for every body, cost 1 µs a request.
   */
  readonly #keys: number[] = [0];
  #values = 0;
  #depth = 0;
  #inString = false;
  /** The next byte is escaped (a backslash ended the last chunk inside a string). */
  #escaped = false;
  /** The last string closed could be one of the keys that poison prototypes (a key if a colon follows). */
  #lastSuspect = false;
  #suspect = false;
  /** The text so far of a string a chunk ended in, while it is short enough to be a suspect key; undefined when longer. */
  #carry: Uint8Array | undefined;

  constructor(limits: JsonShapeLimits) {
    this.#limits = limits;
  }

  /** A key of the body could be `__proto__` or `constructor`: it must be parsed with the check for them. */
  get suspect(): boolean {
    return this.#suspect;
  }

  /** Counts one more piece of the body; the first bound it passes, else undefined. */
  feed(chunk: Uint8Array): ShapeViolation | undefined {
    // Locals in the loop, written back once: this runs over every byte between strings.
    const { values: maxValues, depth: maxDepth, keys: maxKeys } = this.#limits;
    const keys = this.#keys;
    const length = chunk.length;
    let values = this.#values;
    let depth = this.#depth;
    let i = 0;
    let violation: ShapeViolation | undefined;
    if (this.#inString) {
      i = this.#stringEnd(chunk, 0);
      if (i < 0) {
        this.#carry = carried(this.#carry, chunk, 0, length);
        return undefined;
      }
      // A string across chunks: its text is the carry and this chunk's head.
      const head = carried(this.#carry, chunk, 0, i - 1);
      this.#lastSuspect = head !== undefined && suspectKey(head, 0, head.length);
    }
    while (i < length) {
      const byte = chunk[i++]!;
      if (byte === QUOTE) {
        this.#inString = true;
        const start = i;
        i = this.#stringEnd(chunk, i);
        if (i < 0) {
          this.#carry = carried(new Uint8Array(0), chunk, start, length);
          break;
        }
        this.#lastSuspect = suspectKey(chunk, start, i - 1);
      } else if (byte === COMMA) {
        if (++values > maxValues) {
          violation = { kind: 'values', limit: maxValues };
          break;
        }
      } else if (byte === COLON) {
        if (this.#lastSuspect) this.#suspect = true;
        if (++keys[depth]! > maxKeys) {
          violation = { kind: 'keys', limit: maxKeys };
          break;
        }
      } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
        if (++depth > maxDepth) {
          violation = { kind: 'depth', limit: maxDepth };
          break;
        }
        keys[depth] = 0;
        if (++values > maxValues) {
          violation = { kind: 'values', limit: maxValues };
          break;
        }
      } else if ((byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) && depth > 0) {
        // Unbalanced closers are JSON.parse's to refuse; the count only must not go below zero.
        depth--;
      }
    }
    this.#values = values;
    this.#depth = depth;
    return violation;
  }

  /** From inside a string at `from`: the index after its closing quote, or -1 when the string goes on past this chunk. */
  #stringEnd(chunk: Uint8Array, from: number): number {
    const length = chunk.length;
    let i = from;
    if (this.#escaped) {
      this.#escaped = false;
      i++;
    }
    // Short strings (keys, roles, names) byte by byte: cheaper than a call into memchr each.
    const near = Math.min(length, i + SHORT_STRING);
    while (i < near) {
      const byte = chunk[i++]!;
      if (byte === QUOTE) {
        this.#inString = false;
        return i;
      }
      if (byte === BACKSLASH) i++;
    }
    if (i > length) {
      // The chunk ended on a backslash: it escapes the next chunk's first byte.
      this.#escaped = true;
      return -1;
    }
    const end = closingQuote(chunk, i);
    if (end < 0) {
      // A trailing odd run of backslashes escapes the next chunk's first byte.
      this.#escaped = trailingBackslashes(chunk, i, length) % 2 === 1;
      return -1;
    }
    this.#inString = false;
    return end + 1;
  }
}

const PROTO = Buffer.from('__proto__');
const CONSTRUCTOR = Buffer.from('constructor');
/** The longest a key that decodes to `constructor` can be written: each letter as a \uXXXX escape. */
const LONGEST_SUSPECT = CONSTRUCTOR.length * 6;

/** `carry` and chunk[start, end) together, while short enough to be a suspect key; undefined when longer (or carry was). */
function carried(carry: Uint8Array | undefined, chunk: Uint8Array, start: number, end: number): Uint8Array | undefined {
  if (carry === undefined || carry.length + end - start > LONGEST_SUSPECT) return undefined;
  const joined = new Uint8Array(carry.length + end - start);
  joined.set(carry);
  joined.set(chunk.subarray(start, end), carry.length);
  return joined;
}

/** Whether chunk[start, end), a string's text, could be `__proto__` or `constructor`: spelt so, or with escapes. */
function suspectKey(chunk: Uint8Array, start: number, end: number): boolean {
  const length = end - start;
  if (length < PROTO.length || length > LONGEST_SUSPECT) return false;
  if (length === PROTO.length && equals(chunk, start, PROTO)) return true;
  if (length === CONSTRUCTOR.length && equals(chunk, start, CONSTRUCTOR)) return true;
  for (let i = start; i < end; i++) if (chunk[i] === BACKSLASH) return true;
  return false;
}

function equals(chunk: Uint8Array, start: number, word: Uint8Array): boolean {
  for (let i = 0; i < word.length; i++) if (chunk[start + i] !== word[i]) return false;
  return true;
}

/** The index of the quote that closes the string `from` is inside of, or -1 when it is not in this chunk. */
function closingQuote(chunk: Uint8Array, from: number): number {
  let at = from;
  for (;;) {
    const quote = chunk.indexOf(QUOTE, at);
    if (quote < 0) return -1;
    // A quote after an odd run of backslashes is escaped; the string goes on.
    if (trailingBackslashes(chunk, from, quote) % 2 === 0) return quote;
    at = quote + 1;
  }
}

/** Backslashes that end chunk[from, to). */
function trailingBackslashes(chunk: Uint8Array, from: number, to: number): number {
  let run = 0;
  for (let j = to - 1; j >= from && chunk[j] === BACKSLASH; j--) run++;
  return run;
}
