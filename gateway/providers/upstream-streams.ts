// Reading a backend's streamed answer, once its text is coming, as the JSON objects it holds:
// server-sent events (Anthropic's format) and newline-delimited JSON (Ollama's). Each bounds what
// it holds of one event, and a failure while reading comes out as an UpstreamError.
import { createParser } from 'eventsource-parser';
import type { JsonObject } from '../wire/openai-wire.ts';
import { eventTooLarge, parseChunk, type Secrets } from './stream-event.ts';
import { toUpstreamError } from './upstream-failures.ts';

/**
 * Newline-delimited JSON objects (Ollama's streaming format). Split here rather than by
 * readline, which holds a line of any length: a line past `maxLineChars` throws UpstreamError.
 * Leaving early (the reader stops) returns the body, which aborts the request.
 */
export async function* ndjson(
  body: AsyncIterable<string>,
  signal: AbortSignal,
  maxLineChars: number,
  secrets: Secrets,
): AsyncGenerator<JsonObject> {
  let partial = '';
  try {
    for await (const text of body) {
      let start = 0;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        const line = partial + text.slice(start, end);
        partial = '';
        start = end + 1;
        if (line.trim() !== '') yield parseChunk(line, secrets);
      }
      partial += start === 0 ? text : text.slice(start);
      if (partial.length > maxLineChars) throw eventTooLarge('line', maxLineChars);
    }
    if (partial.trim() !== '') yield parseChunk(partial, secrets);
  } catch (error) {
    throw toUpstreamError(error, signal);
  }
}

/**
 * Server-sent events' JSON data, in order (eventsource-parser splits them); an event past
 * `maxEventChars` throws UpstreamError. Leaving early returns the body, which aborts the request.
 */
export async function* sseEvents(
  body: AsyncIterable<string>,
  signal: AbortSignal,
  maxEventChars: number,
  secrets: Secrets,
): AsyncGenerator<JsonObject> {
  const ready: string[] = [];
  let overflow = false;
  const parser = createParser({
    maxBufferSize: maxEventChars,
    onEvent: (event) => ready.push(event.data),
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') overflow = true;
    },
  });
  try {
    for await (const text of body) {
      parser.feed(text);
      if (overflow) throw eventTooLarge('event', maxEventChars);
      while (ready.length > 0) yield parseChunk(ready.shift()!, secrets);
    }
  } catch (error) {
    throw toUpstreamError(error, signal);
  }
}
