// The body of a streamed answer as text, in the order it arrives: undici's handler API pushes
// the bytes in, the reader pulls text out with for-await. Used for Ollama's NDJSON lines; the
// OpenAI-style event streams take the push path (sse-chunk-stream.ts). There is no stream object per request,
// and what one read from the backend carries (several events, often the end of the body too)
// reaches the relay in the same turn of the event loop, so it leaves for the client in one write.
import { StringDecoder } from 'node:string_decoder';

/** What the feed needs of the request it reads: undici's request controller has these. */
export interface FeedControl {
  pause(): void;
  resume(): void;
  abort(reason: Error): void;
}

/** Pieces waiting beyond this pause reading from the backend until the reader catches up. */
const HIGH_WATER = 16;

type Waiting = { resolve: (result: IteratorResult<string>) => void; reject: (error: unknown) => void };

export class TextFeed implements AsyncIterableIterator<string> {
  readonly #decoder = new StringDecoder('utf8');
  readonly #pieces: string[] = [];
  #control: FeedControl | undefined;
  #paused = false;
  #ended = false;
  #error: unknown;
  #waiting: Waiting | undefined;

  /** The request to pause, resume or abort; given when undici starts it. */
  attach(control: FeedControl): void {
    this.#control = control;
  }

  /** Bytes of the body; a character split across two pushes is decoded whole. */
  push(bytes: Buffer): void {
    const text = this.#decoder.write(bytes);
    if (text !== '') this.#deliver(text);
  }

  /** The body is complete. */
  end(): void {
    const rest = this.#decoder.end();
    if (rest !== '') this.#deliver(rest);
    this.#ended = true;
    this.#wake();
  }

  /** The body broke off: the reader gets what came before, then `error`. */
  fail(error: unknown): void {
    if (this.#ended || this.#error !== undefined) return;
    this.#error = error;
    this.#wake();
  }

  next(): Promise<IteratorResult<string>> {
    const value = this.#pieces.shift();
    if (value !== undefined) {
      if (this.#paused && this.#pieces.length <= HIGH_WATER / 2) {
        this.#paused = false;
        this.#control?.resume();
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.#error !== undefined) return Promise.reject(this.#error);
    if (this.#ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  /** The reader stopped early (for-await left its loop): the rest is not wanted, the request ends. */
  return(): Promise<IteratorResult<string>> {
    this.#pieces.length = 0;
    if (!this.#ended && this.#error === undefined) {
      const error = new Error('the reader stopped reading');
      this.#error = error;
      this.#control?.abort(error);
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  #deliver(text: string): void {
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = undefined;
      waiting.resolve({ value: text, done: false });
      return;
    }
    this.#pieces.push(text);
    if (!this.#paused && this.#pieces.length >= HIGH_WATER) {
      this.#paused = true;
      this.#control?.pause();
    }
  }

  #wake(): void {
    const waiting = this.#waiting;
    if (!waiting) return;
    this.#waiting = undefined;
    if (this.#error !== undefined) waiting.reject(this.#error);
    else waiting.resolve({ value: undefined, done: true });
  }
}
