// Reads a Prometheus text answer (version 0.0.4, which vLLM serves) as its bytes arrive, line by
// line, and parses only the lines of the names wanted. Routing needs a few numbers out of a text
// read twice a second per replica, and a hostile or broken engine can serve a megabyte of comments
// or of label sets of other metrics: those are skipped from their first bytes (a comment by its
// `#`, another metric by its name, compared as bytes, with no string made), never decoded or
// parsed. A line of a wanted name is read strictly (prometheus-text.ts), and a line that starts
// with no metric name at all (an HTML error page) refuses the text: a reader that guessed at
// garbage would route on numbers nobody sent. The work is bounded: lines of wanted names at most
// `maxSamples`, one line at most `maxLineBytes`, and reading stops once the groups of `enough`
// have all been read whole (the format keeps a metric's lines together: a group ends at the next
// sample line of another name).
import { parseSampleLine } from './prometheus-text.ts';

export interface ScanLimits {
  /** Lines of wanted names parsed at most; one more refuses the text. */
  readonly maxSamples: number;
  /** Longest line kept while it arrives in pieces; a longer one refuses the text. */
  readonly maxLineBytes: number;
}

export const DEFAULT_SCAN_LIMITS: ScanLimits = { maxSamples: 1024, maxLineBytes: 64 * 1024 };

/** What a scan took in: bytes, lines looked at, and lines of wanted names parsed. */
export interface ScanCount {
  readonly bytes: number;
  readonly lines: number;
  readonly samples: number;
}

/** The values of each wanted metric, one per label set, in the text's order; or why the text is refused. */
export type ParsedSamples =
  | { readonly ok: true; readonly samples: ReadonlyMap<string, readonly number[]> }
  | { readonly ok: false; readonly error: string };

const NEWLINE = 0x0a;
const CR = 0x0d;
const HASH = 0x23;
const SPACE = 0x20;
const TAB = 0x09;
const BRACE = 0x7b;

/** Bytes a metric name may start with: [a-zA-Z_:]. */
const NAME_START = new Uint8Array(256);
for (let b = 0; b < 256; b++) {
  const c = String.fromCharCode(b);
  NAME_START[b] = /[a-zA-Z_:]/.test(c) ? 1 : 0;
}

export class SampleScanner {
  readonly #limits: ScanLimits;
  /** The wanted names as bytes, by their length. */
  readonly #byLength: [number, { name: string; bytes: Buffer }[]][] = [];
  /** The bytes a wanted name starts with: a line starting with another is not read further. */
  readonly #firstBytes = new Uint8Array(256);
  readonly #enough: ReadonlySet<string>;
  readonly #samples = new Map<string, number[]>();
  /** Wanted names whose group of lines was read to its end. */
  readonly #complete = new Set<string>();
  /** The wanted name of the group being read. */
  #current: string | undefined;
  /** A line that arrived in part: its pieces so far. */
  #carry: Buffer[] = [];
  #carried = 0;
  /** The line arriving in pieces is not read (a comment, another metric's sample): its rest is passed over up to its newline. */
  #passing = false;
  #bytes = 0;
  #lines = 0;
  #parsed = 0;
  #error: string | undefined;
  #done = false;

  /** `wanted`: the names whose samples are kept; `enough`: of those, the ones whose groups, once read, end the scan. */
  constructor(wanted: ReadonlySet<string>, enough: ReadonlySet<string>, limits: ScanLimits = DEFAULT_SCAN_LIMITS) {
    this.#limits = limits;
    this.#enough = enough;
    for (const name of wanted) {
      const bytes = Buffer.from(name, 'latin1');
      this.#firstBytes[bytes[0]!] = 1;
      const same = this.#byLength.find(([length]) => length === bytes.length);
      if (same) same[1].push({ name, bytes });
      else this.#byLength.push([bytes.length, [{ name, bytes }]]);
    }
  }

  /** Nothing more is needed: every group of `enough` was read, or the text is refused. */
  get done(): boolean {
    return this.#done;
  }

  get count(): ScanCount {
    return { bytes: this.#bytes, lines: this.#lines, samples: this.#parsed };
  }

  /** The next bytes of the text. */
  push(chunk: Buffer): void {
    if (this.#done) return;
    this.#bytes += chunk.length;
    let start = 0;
    if (this.#passing) {
      const newline = chunk.indexOf(NEWLINE);
      if (newline < 0) return;
      this.#passing = false;
      this.#lines++;
      start = newline + 1;
    } else if (this.#carried > 0) {
      const newline = chunk.indexOf(NEWLINE);
      if (newline < 0) {
        this.#hold(chunk);
        return;
      }
      this.#hold(chunk.subarray(0, newline));
      if (this.#done) return;
      const line = Buffer.concat(this.#carry, this.#carried);
      this.#carry = [];
      this.#carried = 0;
      this.#line(line, 0, line.length);
      start = newline + 1;
    }
    while (start < chunk.length && !this.#done) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (newline < 0) {
        this.#hold(chunk.subarray(start));
        return;
      }
      this.#line(chunk, start, newline);
      start = newline + 1;
    }
  }

  /** The text is over: its last line, if it had no newline, is read too. */
  end(): ParsedSamples {
    if (!this.#done && this.#carried > 0) {
      const line = Buffer.concat(this.#carry, this.#carried);
      this.#line(line, 0, line.length);
    }
    this.#done = true;
    return this.#error === undefined ? { ok: true, samples: this.#samples } : { ok: false, error: this.#error };
  }

  /** Keeps part of a line until its end arrives. */
  #hold(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.#carried === 0 && this.#passesOver(piece)) {
      this.#passing = true;
      return;
    }
    this.#carried += piece.length;
    if (this.#carried > this.#limits.maxLineBytes) {
      this.#refuse(`line ${this.#lines + 1}: longer than ${this.#limits.maxLineBytes} bytes`);
      return;
    }
    // Copied: the chunk it is cut from is not held.
    this.#carry.push(Buffer.from(piece));
  }

  /**
   * Whether the line `start` begins is not read, told from its first bytes: a comment, or a sample
   * of a metric whose first byte no wanted name has (which ends the group being read). A line
   * that may be wanted, or that is not yet known, is kept until its end.
   */
  #passesOver(start: Buffer): boolean {
    let i = 0;
    while (i < start.length && (start[i] === SPACE || start[i] === TAB)) i++;
    if (i === start.length) return false;
    const first = start[i]!;
    if (first === HASH) return true;
    if (NAME_START[first] === 0 || this.#firstBytes[first] === 1) return false;
    this.#groupEnds();
    return true;
  }

  /** One line, bytes [from, to) of `buffer` (its newline excluded). */
  #line(buffer: Buffer, from: number, to: number): void {
    this.#lines++;
    let start = from;
    while (start < to && (buffer[start] === SPACE || buffer[start] === TAB)) start++;
    if (start === to || buffer[start] === HASH || (buffer[start] === CR && start + 1 === to)) return;
    if (NAME_START[buffer[start]!] === 0) {
      this.#refuse(`line ${this.#lines}: not a metric name`);
      return;
    }
    const name = this.#firstBytes[buffer[start]!] === 1 ? this.#wantedName(buffer, start, to) : undefined;
    if (name === undefined) {
      this.#groupEnds();
      return;
    }
    if (name !== this.#current) this.#groupEnds();
    this.#current = name;
    if (++this.#parsed > this.#limits.maxSamples) {
      this.#refuse(`more than ${this.#limits.maxSamples} samples of the metrics read`);
      return;
    }
    const end = buffer[to - 1] === CR ? to - 1 : to;
    const sample = parseSampleLine(buffer.toString('utf8', start, end).trimEnd());
    if (typeof sample === 'string') {
      this.#refuse(`line ${this.#lines}: ${sample}`);
      return;
    }
    const values = this.#samples.get(name);
    if (values) values.push(sample.value);
    else this.#samples.set(name, [sample.value]);
  }

  /** The wanted name the line at `start` is a sample of (its name followed by labels or a space), if any. */
  #wantedName(buffer: Buffer, start: number, to: number): string | undefined {
    for (const [length, names] of this.#byLength) {
      if (start + length > to) continue;
      // The name ends there: labels, a blank, or the line's end (a wanted name without a value is read, and refused).
      const after = start + length === to ? SPACE : buffer[start + length];
      if (after !== BRACE && after !== SPACE && after !== TAB && after !== CR) continue;
      for (const { name, bytes } of names) if (buffer.compare(bytes, 0, length, start, start + length) === 0) return name;
    }
    return undefined;
  }

  /** A sample line of another name: the group being read, if any, is whole. */
  #groupEnds(): void {
    const current = this.#current;
    if (current === undefined) return;
    this.#current = undefined;
    this.#complete.add(current);
    if (this.#enough.size > 0 && [...this.#enough].every((name) => this.#complete.has(name))) this.#done = true;
  }

  #refuse(error: string): void {
    this.#error = error;
    this.#done = true;
  }
}

/** The samples of `wanted` in a whole `text`, strictly read (the scanner over it in one piece). */
export function parseSamples(text: string, wanted: ReadonlySet<string>, limits: ScanLimits = DEFAULT_SCAN_LIMITS): ParsedSamples {
  const scanner = new SampleScanner(wanted, new Set(), limits);
  scanner.push(Buffer.from(text));
  return scanner.end();
}
