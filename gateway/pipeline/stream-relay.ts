// A streamed answer on its way to the client: the sink of the provider's event stream. Each event
// is translated to the caller's API (translators/), which reads, as it goes, the usage the backend
// reported and the text it produced (kept for counting, bounded: produced-text.ts). The events of
// one read from the backend leave in one write, and while the client's socket is full the backend
// is paused until it drains, so what a slow client makes the gateway hold stays bounded.
import type { ChunkSink, ChunkStream } from '../providers/chunk-stream.ts';
import type { TokenUsage } from '../wire/openai-wire.ts';
import type { UpstreamError } from '../providers/upstream-error.ts';
import { ProducedText } from '../metering/produced-text.ts';
import type { Reading, StreamTranslation } from '../translators/translator.ts';
import type { ClientStream } from './answer-channel.ts';

/** What the relay read of a stream: the metering's side of the translation. */
export class StreamReading implements Reading {
  /** The backend's own usage report, when it sent one. */
  reported: TokenUsage | undefined;
  readonly produced = new ProducedText();
  /** Milliseconds from `startedAt` to the first text. */
  ttftMs: number | null = null;
  /** Events that carried text. */
  chunks = 0;
  readonly #startedAt: number;

  constructor(startedAt: number) {
    this.#startedAt = startedAt;
  }

  text(text: string): void {
    this.chunks++;
    this.produced.add(text);
    this.ttftMs ??= performance.now() - this.#startedAt;
  }

  usage(usage: TokenUsage | undefined): void {
    if (usage) this.reported = usage;
  }
}

/**
 * Relays `stream` to `res` (its head already written) through `translation` until the stream
 * ends or fails; resolves with why it ended early, if it did. The response is left open for the
 * caller to end.
 */
export function relayChunks(stream: ChunkStream, res: ClientStream, translation: StreamTranslation): Promise<UpstreamError | undefined> {
  return new Promise((resolve) => {
    let pending = '';
    let paused = false;
    const onDrain = () => {
      paused = false;
      stream.resume();
    };
    const over = (failure: UpstreamError | undefined) => {
      res.off('drain', onDrain);
      resolve(failure);
    };
    const sink: ChunkSink = {
      chunk(event, json) {
        pending += translation.event(event, json);
      },
      flush() {
        if (pending === '') return;
        const text = pending;
        pending = '';
        // A client gone: its request is being cancelled, and what is left has nowhere to go.
        if (res.destroyed || res.write(text) || paused) return;
        paused = true;
        stream.pause();
        res.once('drain', onDrain);
      },
      end() {
        sink.flush();
        over(undefined);
      },
      fail(error) {
        sink.flush();
        over(error);
      },
    };
    stream.start(sink);
  });
}
