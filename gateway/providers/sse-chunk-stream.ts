// An OpenAI-style event stream (server-sent events whose data are JSON objects, ending at
// `data: [DONE]`) read straight from undici's handler callbacks: each read from the backend is
// decoded, parsed (eventsource-parser, callback-based) and its chunks given to the sink in the
// same turn, then flushed, so one read leaves for the client in one write. No promise, no
// stream object, no queue per chunk; what arrives before the sink is attached is held until then.
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { ChunkSink, ChunkStream } from './chunk-stream.ts';
import { UpstreamError } from './upstream-error.ts';
import { eventTooLarge, parseChunk, type Secrets } from './stream-event.ts';

/** What the stream needs of the request it reads: undici's request controller has these. */
export interface StreamControl {
  pause(): void;
  resume(): void;
  abort(reason: Error): void;
}

/** Reads held before the sink is attached beyond which the request is paused: the relay starts in the next turns, so this is a bound, not a buffer. */
const EARLY_READS = 16;

export class SseChunkStream implements ChunkStream {
  readonly #decoder = new StringDecoder('utf8');
  readonly #parser: EventSourceParser;
  readonly #maxEventChars: number;
  readonly #secrets: Secrets;
  #control: StreamControl | undefined;
  #sink: ChunkSink | undefined;
  /** Text that arrived before the sink was attached (reading pauses at EARLY_READS of it). */
  #early: string[] | undefined = [];
  #pausedEarly = false;
  #ended = false;
  /** `data: [DONE]` came: the rest of the body is read (so the connection can be used again) and ignored. */
  #done = false;
  #overflow = false;
  #failure: UpstreamError | undefined;
  #over = false;

  /** `maxEventChars` bounds what the parser holds of an incomplete event. */
  constructor(maxEventChars: number, secrets: Secrets) {
    this.#maxEventChars = maxEventChars;
    this.#secrets = secrets;
    this.#parser = createParser({
      maxBufferSize: maxEventChars,
      onEvent: (event) => this.#event(event.data),
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') this.#overflow = true;
      },
    });
  }

  /** The request to pause, resume or abort; given when undici starts it. */
  attach(control: StreamControl): void {
    this.#control = control;
  }

  start(sink: ChunkSink): void {
    this.#sink = sink;
    const early = this.#early!;
    this.#early = undefined;
    for (const text of early) this.#read(text);
    if (this.#failure) this.#fail(this.#failure);
    else if (this.#ended) this.#end();
    else if (this.#pausedEarly) this.resume();
  }

  pause(): void {
    this.#control?.pause();
  }

  resume(): void {
    this.#control?.resume();
  }

  /** Bytes of the body; a character split across two reads is decoded whole. */
  push(bytes: Buffer): void {
    const text = this.#decoder.write(bytes);
    if (text === '') return;
    if (!this.#early) {
      this.#read(text);
      return;
    }
    this.#early.push(text);
    if (this.#early.length === EARLY_READS) {
      this.#pausedEarly = true;
      this.pause();
    }
  }

  /** The body is complete. */
  end(): void {
    const rest = this.#decoder.end();
    if (rest !== '') {
      if (this.#early) this.#early.push(rest);
      else this.#read(rest);
    }
    this.#ended = true;
    if (this.#sink) this.#end();
  }

  /** The body broke off (or the request was aborted): the sink gets what came before, then `error`. */
  fail(error: UpstreamError): void {
    if (this.#ended || this.#failure) return;
    this.#failure = error;
    if (this.#sink) this.#fail(error);
  }

  #read(text: string): void {
    if (this.#done || this.#over) return;
    try {
      this.#parser.feed(text);
      if (this.#overflow && !this.#done) throw eventTooLarge('event', this.#maxEventChars);
    } catch (error) {
      // The request is over: the rest of the answer is not wanted (undici then reports the abort,
      // which fail() ignores as this failure came first).
      const failure = error instanceof UpstreamError ? error : new UpstreamError('protocol', 'the stream failed');
      this.#failure = failure;
      this.#control?.abort(failure);
      this.#fail(failure);
      return;
    }
    this.#sink!.flush();
  }

  #event(data: string): void {
    if (this.#done || this.#over) return;
    if (data === '[DONE]') {
      this.#done = true;
      return;
    }
    // Throws UpstreamError (not JSON, an error event): caught in #read.
    this.#sink!.chunk(parseChunk(data, this.#secrets), data);
  }

  #end(): void {
    if (this.#done) this.#finish(() => this.#sink!.end());
    else this.#fail(new UpstreamError('protocol', 'the backend ended the stream before the answer was complete'));
  }

  #fail(error: UpstreamError): void {
    this.#finish(() => this.#sink!.fail(error));
  }

  #finish(report: () => void): void {
    if (this.#over) return;
    this.#over = true;
    report();
  }
}
