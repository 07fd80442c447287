// The text a stream produced, kept only as far as counting it would read. One count scans at most
// EXACT_CHARS characters (tokens.ts); a longer text is not counted but bounded by its UTF-8 bytes.
// So the pieces are kept up to EXACT_CHARS characters and, past that, only their bytes are added
// up: the count is the same as that of the whole text (exact, or its bytes), and what a stream
// holds no longer grows with the length of its answer.
import { countTextTokens, EXACT_CHARS } from './tokens.ts';

export class ProducedText {
  readonly #maxChars: number;
  #pieces: string[] = [];
  #chars = 0;
  /** UTF-8 bytes of everything produced, once past maxChars (then no piece is kept). */
  #bytes: number | undefined;
  /** The first maxChars characters, once past maxChars: what a trace that records content shows. */
  #head = '';

  constructor(maxChars: number = EXACT_CHARS) {
    this.#maxChars = maxChars;
  }

  add(text: string): void {
    if (this.#bytes !== undefined) {
      this.#bytes += Buffer.byteLength(text, 'utf8');
      return;
    }
    this.#chars += text.length;
    this.#pieces.push(text);
    if (this.#chars > this.#maxChars) {
      const whole = this.#pieces.join('');
      this.#bytes = Buffer.byteLength(whole, 'utf8');
      this.#head = whole.slice(0, this.#maxChars);
      this.#pieces = [];
    }
  }

  /** Characters kept (for tests and bounds): at most maxChars. */
  get keptChars(): number {
    return this.#bytes === undefined ? this.#chars : 0;
  }

  /** What was produced, as far as it is kept (its first maxChars characters past that). */
  text(): string {
    return this.#bytes === undefined ? this.#pieces.join('') : this.#head;
  }

  /** The tokens of what was produced: counted, or its UTF-8 bytes past what one count scans. */
  tokens(): number {
    return this.#bytes ?? countTextTokens(this.#pieces.join(''));
  }
}
