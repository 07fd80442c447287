// HTTP to backends: one keep-alive connection pool per origin (undici Agent), JSON in, and
// failures classified as UpstreamError so the gateway can decide whether to fail over. What is
// held of an answer is bounded (UpstreamLimits), and text a backend sends back in an error has
// the request's secrets masked before it goes anywhere (secrets.ts).
import { Readable } from 'node:stream';
import { EncodedForm, sent } from './multipart-form.ts';
import { Agent, errors as undiciErrors, type Dispatcher } from 'undici';
import { UpstreamError } from './upstream-error.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import { TextFeed } from './text-feed.ts';
import { SseChunkStream } from './sse-chunk-stream.ts';
import type { ChunkStream } from './chunk-stream.ts';
import { describeError, eventTooLarge, parseChunk, type Secrets } from './stream-event.ts';
import { requestSecrets, scrubSecrets } from './secrets.ts';
import { createParser } from 'eventsource-parser';
import { DEFAULT_UPSTREAM_LIMITS, type UpstreamLimits } from './upstream-limits.ts';
import type { UpstreamTimeouts } from './upstream-timeouts.ts';

export interface PostOptions {
  readonly signal: AbortSignal;
  /** To connect (a connection of the pool is reused when one is free), for the response headers, and at most between two body bytes. */
  readonly timeouts: UpstreamTimeouts;
  readonly headers?: Record<string, string> | undefined;
}

/** What a request that may be answered with a stream accepts. */
const STREAM_OR_JSON = 'application/json, text/event-stream';

/** Of an error body, only the start is kept: describeStatus reads no further. */
const ERROR_TEXT_BYTES = 8 * 1024;

interface Target {
  readonly origin: string;
  readonly prefix: string;
}

/** What reads a streamed answer's body: bytes in as they come, then its end or its failure. */
interface BodyReader {
  attach(control: { pause(): void; resume(): void; abort(reason: Error): void }): void;
  push(bytes: Buffer): void;
  end(): void;
  fail(error: UpstreamError): void;
}

export class UpstreamHttp {
  /** One pool per connect timeout (undici sets it per pool): in practice one, or a few. */
  readonly #agents = new Map<number, Agent>();
  readonly #limits: UpstreamLimits;
  readonly #targets = new Map<string, Target>();

  constructor(limits: UpstreamLimits = DEFAULT_UPSTREAM_LIMITS) {
    this.#limits = limits;
  }

  #agent(connectMs: number): Agent {
    let agent = this.#agents.get(connectMs);
    if (!agent) {
      agent = new Agent({ keepAliveTimeout: 30_000, connect: { timeout: connectMs } });
      this.#agents.set(connectMs, agent);
    }
    return agent;
  }

  /**
   * POSTs JSON and reads a JSON answer back. This is the hot path of every non-streamed request,
   * so it uses undici's handler API: the answer's bytes are gathered as they come, with no
   * stream object per request. An answer larger than maxBodyBytes is a failure of the backend.
   */
  postJson(baseUrl: string, path: string, payload: unknown, options: PostOptions): Promise<unknown> {
    return this.#postWhole(baseUrl, path, payload, options, 'application/json', parseJsonAnswer);
  }

  /**
   * POSTs a multipart form (a transcription's audio and fields) and reads the whole answer back:
   * a JSON answer parsed, any other (text, SRT, WebVTT) as text with its media type.
   */
  postForm(baseUrl: string, path: string, form: EncodedForm, options: PostOptions): Promise<FormAnswer> {
    const sent = { ...options, headers: { ...options.headers, 'content-type': form.contentType, 'content-length': String(form.length) } };
    return this.#postWhole(baseUrl, path, form, sent, '*/*', (text, headers) => {
      const contentType = headerText(headers['content-type']) ?? '';
      return contentType.toLowerCase().startsWith('application/json') ? { json: parseJsonAnswer(text) } : { text, contentType };
    });
  }

  /** POSTs and gathers the whole answer, handed to `decode` with its headers once it is all in (postJson, postForm). */
  #postWhole<T>(
    baseUrl: string,
    path: string,
    payload: unknown,
    options: PostOptions,
    accept: string,
    decode: (text: string, headers: AnswerHeaders) => T,
  ): Promise<T> {
    const { signal } = options;
    const maxBytes = this.#limits.maxBodyBytes;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(cancelled());
      const chunks: Buffer[] = [];
      let received = 0;
      let status = 0;
      let answerHeaders: AnswerHeaders = {};
      let retryAfterMs: number | undefined;
      let stopCancelling = () => {};
      const settle = (outcome: () => T) => {
        stopCancelling();
        try {
          resolve(outcome());
        } catch (error) {
          reject(error);
        }
      };
      this.#agent(options.timeouts.connectMs).dispatch(this.#request(baseUrl, path, payload, options, accept), {
        onRequestStart(controller) {
          stopCancelling = cancelOn(signal, controller);
        },
        onResponseStart(controller, statusCode, headers) {
          status = statusCode;
          answerHeaders = headers;
          if (!isOk(status)) retryAfterMs = retryAfterOf(headers);
          if (declaredLength(headers) > maxBytes) controller.abort(answerTooLarge(maxBytes));
        },
        onResponseData(controller, chunk) {
          received += chunk.length;
          if (received > maxBytes) {
            // Stop holding anything at once: the bytes gathered so far go with the request.
            chunks.length = 0;
            controller.abort(answerTooLarge(maxBytes));
          } else if (isOk(status) || received - chunk.length < ERROR_TEXT_BYTES) {
            chunks.push(chunk);
          }
        },
        onResponseEnd() {
          settle(() => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (!isOk(status)) throw statusError(status, text, secretsOf(baseUrl, options), retryAfterMs);
            return decode(text, answerHeaders);
          });
        },
        onResponseError(_controller, error) {
          settle(() => {
            throw toUpstreamError(error, signal);
          });
        },
      });
    });
  }

  /**
   * POSTs a streamed request and reads its answer as server-sent events whose data are JSON
   * objects (OpenAI's streaming format), pushed to the stream's sink as they arrive. A 2xx answer
   * that is not an event stream (a JSON answer to `stream: true`) fails here, before anything
   * reached the client.
   */
  postEvents(baseUrl: string, path: string, payload: unknown, options: PostOptions): Promise<ChunkStream> {
    const stream = new SseChunkStream(this.#limits.maxEventBytes, secretsOf(baseUrl, options));
    return this.#postBody(baseUrl, path, payload, options, 'text/event-stream', stream);
  }

  /**
   * POSTs a streamed request and reads its answer as server-sent events whose data are JSON
   * objects, to the end of the body (Anthropic's format: each event names its type in its data,
   * and no `[DONE]` closes it). A 2xx answer that is not an event stream fails here.
   */
  async postSse(baseUrl: string, path: string, payload: unknown, options: PostOptions): Promise<AsyncIterable<JsonObject>> {
    const text = await this.#postBody(baseUrl, path, payload, options, 'text/event-stream', new TextFeed());
    return sseEvents(text, options.signal, this.#limits.maxEventBytes, secretsOf(baseUrl, options));
  }

  /** POSTs a streamed request and reads its answer as newline-delimited JSON objects (Ollama's format). */
  async postLines(baseUrl: string, path: string, payload: unknown, options: PostOptions): Promise<AsyncIterable<JsonObject>> {
    const text = await this.#postBody(baseUrl, path, payload, options, undefined, new TextFeed());
    return ndjson(text, options.signal, this.#limits.maxEventBytes, secretsOf(baseUrl, options));
  }

  /**
   * POSTs JSON and, once a 2xx status came, gives the answer's body to `reader` as it arrives:
   * the hot path of every streamed request. Handler API, as postJson: no stream object per
   * request. With `mediaType`, a 2xx answer of another declared type is refused before it is read.
   */
  #postBody<Reader extends BodyReader>(
    baseUrl: string,
    path: string,
    payload: unknown,
    options: PostOptions,
    mediaType: string | undefined,
    reader: Reader,
  ): Promise<Reader> {
    const { signal } = options;
    const maxBytes = this.#limits.maxBodyBytes;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(cancelled());
      const errorBody: Buffer[] = [];
      let received = 0;
      let status = 0;
      let retryAfterMs: number | undefined;
      let started = false;
      let stopCancelling = () => {};
      this.#agent(options.timeouts.connectMs).dispatch(this.#request(baseUrl, path, payload, options, STREAM_OR_JSON), {
        onRequestStart(controller) {
          reader.attach(controller);
          stopCancelling = cancelOn(signal, controller);
        },
        onResponseStart(controller, statusCode, headers) {
          status = statusCode;
          if (!isOk(status)) retryAfterMs = retryAfterOf(headers);
          if (!isOk(statusCode)) {
            if (declaredLength(headers) > maxBytes) controller.abort(answerTooLarge(maxBytes));
            return;
          }
          const type = headerText(headers['content-type']);
          if (mediaType !== undefined && type !== undefined && !type.toLowerCase().startsWith(mediaType)) {
            controller.abort(
              new UpstreamError('protocol', `the backend answered a streamed request with ${type.split(';')[0]} instead of ${mediaType}`),
            );
            return;
          }
          started = true;
          resolve(reader);
        },
        onResponseData(controller, chunk) {
          if (started) return reader.push(chunk);
          received += chunk.length;
          if (received > maxBytes) {
            errorBody.length = 0;
            controller.abort(answerTooLarge(maxBytes));
          } else if (received - chunk.length < ERROR_TEXT_BYTES) {
            errorBody.push(chunk);
          }
        },
        onResponseEnd() {
          stopCancelling();
          if (started) reader.end();
          else reject(statusError(status, Buffer.concat(errorBody).toString('utf8'), secretsOf(baseUrl, options), retryAfterMs));
        },
        onResponseError(_controller, error) {
          stopCancelling();
          const failure = toUpstreamError(error, signal);
          if (started) reader.fail(failure);
          else reject(failure);
        },
      });
    });
  }

  /**
   * GETs `baseUrl + path` and resolves once a 2xx status came (the body is not read): an active
   * health check. Throws UpstreamError (a status, a timeout, a connection failure) otherwise.
   */
  get(baseUrl: string, path: string, options: PostOptions): Promise<void> {
    const { signal } = options;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(cancelled());
      let stopCancelling = () => {};
      let status = 0;
      this.#agent(options.timeouts.connectMs).dispatch(this.#request(baseUrl, path, undefined, options, 'application/json'), {
        onRequestStart(controller) {
          stopCancelling = cancelOn(signal, controller);
        },
        onResponseStart(_controller, statusCode) {
          status = statusCode;
        },
        onResponseData() {},
        onResponseEnd() {
          stopCancelling();
          if (isOk(status)) resolve();
          else reject(new UpstreamError('status', `the backend answered ${status}`, status));
        },
        onResponseError(_controller, error) {
          stopCancelling();
          reject(toUpstreamError(error, signal));
        },
      });
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.#agents.values()].map((agent) => agent.close()));
  }

  /**
   * A POST of `payload` to `baseUrl + path` (JSON, or bytes already encoded, whose content-type is
   * in the options' headers), or a GET when there is none, with the backend's timeouts.
   */
  #request(baseUrl: string, path: string, payload: unknown, options: PostOptions, accept: string): Dispatcher.DispatchOptions {
    const target = this.#target(baseUrl);
    const { firstByteMs, betweenChunksMs } = options.timeouts;
    if (payload === undefined) {
      const headers = { accept, ...options.headers };
      return {
        origin: target.origin,
        path: target.prefix + path,
        method: 'GET',
        headers,
        headersTimeout: firstByteMs,
        bodyTimeout: betweenChunksMs,
      };
    }

    return {
      origin: target.origin,
      path: target.prefix + path,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept, ...options.headers },
      // A form's pieces go one after the other (multipart-form.ts): the file's bytes are not copied.
      body: payload instanceof EncodedForm ? Readable.from(sent(payload), { objectMode: false }) : JSON.stringify(payload),
      headersTimeout: firstByteMs,
      bodyTimeout: betweenChunksMs,
    };
  }

  #target(baseUrl: string): Target {
    let target = this.#targets.get(baseUrl);
    if (!target) {
      const url = new URL(baseUrl);
      target = { origin: url.origin, prefix: url.pathname.replace(/\/+$/, '') };
      this.#targets.set(baseUrl, target);
    }
    return target;
  }
}

/** A whole answer to a form: JSON, or text of another media type. */
export type FormAnswer = { readonly json: unknown } | { readonly text: string; readonly contentType: string };

/** An answer's headers, as undici hands them over. */
type AnswerHeaders = Record<string, string | string[] | undefined>;

function parseJsonAnswer(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UpstreamError('protocol', 'the backend answered with a body that is not JSON');
  }
}

const cancelled = () => new UpstreamError('aborted', 'the request was cancelled');

/** Aborts the request when `signal` fires; returns what stops listening once the request is over. */
function cancelOn(signal: AbortSignal, request: { abort(reason: Error): void }): () => void {
  const onAbort = () => request.abort(cancelled());
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/** Bearer authentication, the scheme of every OpenAI-style backend. */
export function bearer(key: string | undefined): Record<string, string> | undefined {
  return key === undefined ? undefined : { authorization: `Bearer ${key}` };
}

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

export function toUpstreamError(error: unknown, signal: AbortSignal): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (signal.aborted) return cancelled();
  if (
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError ||
    error instanceof undiciErrors.ConnectTimeoutError
  ) {
    return new UpstreamError('timeout', 'the backend did not answer within its timeout');
  }
  const code = (error as { code?: unknown } | null)?.code;
  return new UpstreamError('connect', `the backend could not be reached${typeof code === 'string' ? ` (${code})` : ''}`);
}

/** The secrets of a request to `baseUrl`, worked out once, when first asked for. */
function secretsOf(baseUrl: string, options: PostOptions): Secrets {
  let secrets: readonly string[] | undefined;
  return () => (secrets ??= requestSecrets(baseUrl, options.headers));
}

const isOk = (status: number) => status >= 200 && status < 300;

function answerTooLarge(maxBytes: number): UpstreamError {
  return new UpstreamError('protocol', `the backend's answer is larger than ${maxBytes} bytes (--max-upstream-body-bytes)`);
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The body's length the backend declared, or 0 when it declared none. */
function declaredLength(headers: Record<string, string | string[] | undefined>): number {
  const length = Number(headerText(headers['content-length']));
  return Number.isFinite(length) ? length : 0;
}

/**
 * "the backend answered 503: <its reason>", from an error body in any of the usual shapes, with
 * the request's secrets masked: a backend may echo the key it was sent.
 */
function statusError(status: number, body: string, secrets: Secrets, retryAfterMs: number | undefined): UpstreamError {
  // Masked before it is cut short, so no piece of a secret is left at the cut.
  const text = scrubSecrets(body, secrets()).slice(0, 2000);
  let detail: unknown = text;
  try {
    const parsed = JSON.parse(text) as JsonObject;
    detail = parsed.error ?? parsed.detail ?? parsed.message ?? text;
  } catch {
    // Not JSON: keep the text.
  }
  const described = describeError(detail, secrets);
  const error = new UpstreamError('status', `the backend answered ${status}${described ? `: ${described}` : ''}`, status);
  return retryAfterMs === undefined ? error : error.withRetryAfter(retryAfterMs);
}

/** How long a backend that refused asked to be left alone: `retry-after` (seconds or a date), in ms; capped at an hour. */
function retryAfterOf(headers: Record<string, string | string[] | undefined>): number | undefined {
  const text = headerText(headers['retry-after']);
  if (text === undefined) return undefined;
  const seconds = Number(text);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(text) - Date.now();
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, 3_600_000) : undefined;
}
