// A streamed answer on its way to the client: the sink of the provider's chunk stream. Each
// chunk gets the router's name as `model`; the backend's own usage chunk is held back (the
// gateway sends its own at the end); text is kept for counting (bounded, produced-text.ts). The
// chunks of one read from the backend leave in one write, and while the client's socket is full
// the backend is paused until it drains, so what a slow client makes the gateway hold stays bounded.
import type { ChunkSink, ChunkStream } from '../providers/chunk-stream.ts';
import { choiceText, readUsage, type JsonObject, type TokenUsage } from '../wire/openai-wire.ts';
import type { UpstreamError } from '../providers/upstream-error.ts';
import { ProducedText } from '../metering/produced-text.ts';
import { withModel } from '../providers/model-field.ts';
import type { StreamTranslation } from '../dialects/dialect.ts';
import type { ClientStream } from './answer-channel.ts';

/** What the relay saw of a stream, once it is over. */
export interface Relayed {
  /** Why the stream ended early (undefined: it was complete). */
  readonly failure: UpstreamError | undefined;
  /** The backend's own usage report, when it sent one. */
  readonly reported: TokenUsage | undefined;
  /** The first chunk sent on (its id and created are reused for the usage chunk). */
  readonly first: JsonObject | undefined;
  readonly produced: ProducedText;
  /** Milliseconds from `startedAt` to the first text. */
  readonly ttftMs: number | null;
}

/**
 * Relays `stream` to `res` (its head already written) until the stream ends or fails; the
 * response is left open for the caller to end. `model` replaces the backend's model name.
 */
export function relayChunks(
  stream: ChunkStream,
  res: ClientStream,
  model: string,
  startedAt: number,
  translation?: StreamTranslation,
): Promise<Relayed> {
  const modelJson = JSON.stringify(model);
  return new Promise((resolve) => {
    const produced = new ProducedText();
    let reported: TokenUsage | undefined;
    let first: JsonObject | undefined;
    let ttftMs: number | null = null;
    let pending = '';
    let paused = false;
    const onDrain = () => {
      paused = false;
      stream.resume();
    };
    const over = (failure: UpstreamError | undefined) => {
      res.off('drain', onDrain);
      resolve({ failure, reported, first, produced, ttftMs });
    };
    const sink: ChunkSink = {
      chunk(chunk, json) {
        let asReceived = json;
        if (chunk.usage !== undefined && chunk.usage !== null) {
          reported = readUsage(chunk.usage) ?? reported;
          if (!Array.isArray(chunk.choices) || chunk.choices.length === 0) return;
          delete chunk.usage;
          asReceived = undefined;
        }
        first ??= chunk;
        const text = choiceText(chunk);
        if (text !== '') {
          produced.add(text);
          ttftMs ??= performance.now() - startedAt;
        }
        // Another API's events, built from the chunk (dialects/).
        if (translation) {
          pending += translation.chunk(chunk);
          return;
        }
        // The backend's own text with the router's name in it (its one `"model"` key is then the top-level
        // one); serialised only when that cannot be done safely.
        let out = asReceived === undefined || typeof chunk.model !== 'string' ? undefined : withModel(asReceived, modelJson);
        if (out === undefined) {
          chunk.model = model;
          out = JSON.stringify(chunk);
        }
        pending += `data: ${out}\n\n`;
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
