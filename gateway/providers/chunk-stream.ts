// A streamed answer as OpenAI-format chunks, pushed to one sink as they arrive. Push rather than
// pull (async iteration): the chunks of one read from the backend reach the sink in the same turn
// of the event loop, with no promise per chunk, and the sink sends them on in one write. The sink
// pauses the stream while its client is slow and resumes it once the client has caught up.
import type { JsonObject } from '../wire/openai-wire.ts';
import { UpstreamError } from './upstream-error.ts';

/** Where a stream's chunks go. Exactly one of end and fail is called, once, after the last chunk. */
export interface ChunkSink {
  /**
   * The next chunk, in order; with `json`, the text it was parsed from (SSE data), which the sink
   * may send on as it is rather than serialise the chunk again.
   */
  chunk(chunk: JsonObject, json?: string): void;
  /** The chunks of one read from the backend have all been given: a good moment to send them on. */
  flush(): void;
  /** The answer is complete. */
  end(): void;
  /** The backend broke off, or the request was cancelled: no more chunks come. */
  fail(error: UpstreamError): void;
}

export interface ChunkStream {
  /** Starts delivering to `sink` (what arrived before is delivered at once). Called once. */
  start(sink: ChunkSink): void;
  /** Stops reading from the backend until resume(); a read already under way may still arrive. */
  pause(): void;
  resume(): void;
}

/**
 * A stream from chunks produced one by one (the simulator, Ollama's lines): each chunk is
 * flushed on its own. Cancelling `signal` ends it, paused or not, with an 'aborted' failure.
 */
export function chunkStreamOf(chunks: AsyncIterable<JsonObject>, signal: AbortSignal): ChunkStream {
  let paused = false;
  let wake: (() => void) | undefined;
  const resumed = () =>
    new Promise<void>((resolve) => {
      wake = resolve;
    });
  return {
    start(sink) {
      const onAbort = () => wake?.();
      signal.addEventListener('abort', onAbort, { once: true });
      void (async () => {
        try {
          for await (const chunk of chunks) {
            while (paused && !signal.aborted) await resumed();
            if (signal.aborted) throw new UpstreamError('aborted', 'the request was cancelled');
            sink.chunk(chunk);
            sink.flush();
          }
        } catch (error) {
          return sink.fail(asUpstreamError(error, signal));
        } finally {
          signal.removeEventListener('abort', onAbort);
        }
        sink.end();
      })();
    },
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      const waiting = wake;
      wake = undefined;
      waiting?.();
    },
  };
}

/** What a stream failed with, as the relay reports it. */
export function asUpstreamError(error: unknown, signal: AbortSignal): UpstreamError {
  if (error instanceof UpstreamError) return error;
  return signal.aborted ? new UpstreamError('aborted', 'the request was cancelled') : new UpstreamError('protocol', 'the stream failed');
}
